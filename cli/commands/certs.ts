// `vaultgate certs`: a CA and webhook serving certificate for local development or bring-your-own
// (`create`), and a readable view of any certificate file (`inspect`). In a cluster the controller's cert
// keeper does this by itself; these are for when it does not run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateWebhookPki, serviceDnsNames, splitSans } from '../../certs/generate.ts';
import { certFacts, splitPemBundle } from '../../certs/pem.ts';

const DAY_MS = 86_400_000;

const HELP = `Usage: vaultgate certs <create|inspect> [options]

  vaultgate certs create --service <name> --namespace <ns> [options]
      Writes ca.crt, tls.crt and tls.key (ECDSA P-256) to --out. The serving certificate names the
      Service as <svc>, <svc>.<ns>, <svc>.<ns>.svc and <svc>.<ns>.svc.cluster.local, plus --dns/--ip.
      The CA's private key is not written: nothing can sign with this CA afterwards.

      --service <name>         webhook Service name (required)
      --namespace <ns>         its namespace (required)
      --out <dir>              output directory (default ".")
      --dns <name>             extra DNS SAN, repeatable (e.g. localhost)
      --ip <addr>              extra IP SAN, repeatable (e.g. 127.0.0.1)
      --days <n>               serving certificate validity in days (default 365)
      --ca-days <n>            CA validity in days (default 3650)
      --cluster-domain <d>     cluster DNS domain (default cluster.local)
      --force                  overwrite existing files

  vaultgate certs inspect <file> [--warn-days <n>]
      Prints subject, issuer, SANs, validity and CA flag of every certificate in a PEM file (a bundle
      is fine). Warns when one expires within --warn-days (default 30). Exit 1 when one has expired.

  -h, --help                   show this help

Exit status: 0 success, 1 expired certificate or unreadable file, 2 usage error.

Examples:
  vaultgate certs create --service vaultgate-webhook --namespace vaultgate --out ./tls --dns localhost --ip 127.0.0.1
  vaultgate certs inspect ./tls/tls.crt
`;

interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

class UsageError extends Error {}

function positiveNumber(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a positive number, not "${raw}"`);
  return n;
}

async function create(argv: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      service: { type: 'string' },
      namespace: { type: 'string' },
      out: { type: 'string', default: '.' },
      dns: { type: 'string', multiple: true, default: [] },
      ip: { type: 'string', multiple: true, default: [] },
      days: { type: 'string' },
      'ca-days': { type: 'string' },
      'cluster-domain': { type: 'string' },
      force: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.service) throw new UsageError('--service is required');
  if (!values.namespace) throw new UsageError('--namespace is required');
  const ips = splitSans(values.ip);
  if (ips.dnsNames.length) throw new UsageError(`--ip takes IP addresses, not "${ips.dnsNames[0]}"`);
  const dns = splitSans(values.dns);
  if (dns.ipAddresses.length) throw new UsageError(`--dns takes DNS names; use --ip for "${dns.ipAddresses[0]}"`);
  const leafDays = positiveNumber('--days', values.days, 365);
  const caDays = positiveNumber('--ca-days', values['ca-days'], 3650);
  const files = ['ca.crt', 'tls.crt', 'tls.key'].map((f) => join(values.out, f));
  const existing = files.filter((f) => existsSync(f));
  if (existing.length && !values.force) {
    io.stderr.write(`vaultgate certs: ${existing.join(', ')} already exist (use --force to overwrite)\n`);
    return 1;
  }
  const names = { service: values.service, namespace: values.namespace, clusterDomain: values['cluster-domain'] };
  const { ca, leaf } = await generateWebhookPki({
    ...names,
    extraSans: [...values.dns, ...values.ip],
    caValidityDays: caDays,
    leafValidityDays: leafDays,
  });
  mkdirSync(values.out, { recursive: true });
  writeFileSync(files[0]!, ca.cert, { mode: 0o644 });
  writeFileSync(files[1]!, leaf.cert, { mode: 0o644 });
  writeFileSync(files[2]!, leaf.key, { mode: 0o600 });
  const sans = [...serviceDnsNames(names), ...values.dns, ...values.ip];
  io.stdout.write(
    [
      `wrote ${files.join(', ')}`,
      `serving certificate for ${sans.join(', ')}, valid ${leafDays} days; CA valid ${caDays} days`,
      '',
      'Bring your own certificate to the chart:',
      `  kubectl -n ${values.namespace} create secret generic vaultgate-webhook-tls --from-file=${files[0]} --from-file=${files[1]} --from-file=${files[2]}`,
      `  helm install ... --set certs.secretName=vaultgate-webhook-tls --set webhook.caBundle="$(base64 -w0 ${files[0]})"`,
      '  (a non-empty webhook.caBundle tells the chart the certificates are yours: vaultgate will not rotate them)',
      '',
    ].join('\n'),
  );
  return 0;
}

function inspect(argv: string[], io: Io): number {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { 'warn-days': { type: 'string' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError('inspect takes exactly one file');
  const file = positionals[0]!;
  const warnDays = positiveNumber('--warn-days', values['warn-days'], 30);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    io.stderr.write(`vaultgate certs: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}\n`);
    return 1;
  }
  const blocks = splitPemBundle(text);
  if (blocks.length === 0) {
    // never echo the content: the file may be a private key
    io.stderr.write(
      `vaultgate certs: ${file} holds no PEM certificate${/PRIVATE KEY-----/.test(text) ? ' (it holds a private key, not shown)' : ''}\n`,
    );
    return 1;
  }
  const now = Date.now();
  let expired = false;
  blocks.forEach((pem, i) => {
    let f;
    try {
      f = certFacts(pem);
    } catch {
      io.stdout.write(`certificate ${i + 1}/${blocks.length}: unreadable\n`);
      expired = true;
      return;
    }
    const daysLeft = Math.floor((f.notAfter - now) / DAY_MS);
    const sans = [...f.dnsNames, ...f.ipAddresses];
    io.stdout.write(
      [
        `certificate ${i + 1}/${blocks.length}${f.isCA ? ' (CA)' : ''}`,
        `  subject:      ${f.subject}`,
        `  issuer:       ${f.issuer}${f.subject === f.issuer ? ' (self-signed)' : ''}`,
        `  SANs:         ${sans.length ? sans.join(', ') : '(none)'}`,
        `  valid from:   ${new Date(f.notBefore).toISOString()}`,
        `  valid until:  ${new Date(f.notAfter).toISOString()} (${daysLeft >= 0 ? `${daysLeft} days left` : 'EXPIRED'})`,
        `  serial:       ${f.serialNumber}`,
        `  sha256:       ${f.fingerprint}`,
        '',
      ].join('\n'),
    );
    if (now >= f.notAfter) {
      expired = true;
      io.stdout.write(`ERROR: certificate ${i + 1} (${f.subject}) expired on ${new Date(f.notAfter).toISOString()}\n`);
    } else if (daysLeft < warnDays) {
      io.stdout.write(`WARNING: certificate ${i + 1} (${f.subject}) expires in ${daysLeft} days (< ${warnDays})\n`);
    }
  });
  return expired ? 1 : 0;
}

export async function run(
  argv: string[],
  io: Io = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '-h' || sub === '--help' || rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(HELP);
    return sub ? 0 : 2;
  }
  try {
    if (sub === 'create') return await create(rest, io);
    if (sub === 'inspect') return inspect(rest, io);
    throw new UsageError(`unknown subcommand "${sub}" (create or inspect)`);
  } catch (err) {
    const usage = err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    io.stderr.write(
      `vaultgate certs: ${err instanceof Error ? err.message : String(err)}\n${usage ? 'Run "vaultgate certs --help" for usage.\n' : ''}`,
    );
    return usage ? 2 : 1;
  }
}
