// Admission rules for PushSecret (ESO v1alpha1; ESO's webhook has none, its CRD schema and controller
// errors only): what ESO's controller would fail on at every sync is refused up front, naming the field
// (a store reference without name or selector, a dataTo whose store is not among secretStoreRefs,
// remoteKey with rewrite, regexps Go cannot compile, templates vaultgate does not render), and
// generators are refused by name. Where a push may write is not decided here: the controller checks
// each Vault path against the namespace's guardrails, with the store's identity, before writing.
import type { Finding } from '../../admission/kinds.ts';
import { type Obj, deny, has, list, obj, str, warn } from './access.ts';
import { parseGoRegexp } from '../../../golang/index.ts';
import { selectorProblems } from '../../../kube/label-selector.ts';
import { refreshIntervalFindings, validateExternalSecret } from './externalsecret-rules.ts';
import { checkTemplate } from '../../../eso/template.ts';
import { vaultPathFindings } from './vault-path.ts';

/** PushSecret features vaultgate refuses at admission. */
export const PUSHSECRET_FEATURES_NOT_SUPPORTED: readonly string[] = ['spec.selector.generatorRef (generators)'];

export function validatePushSecret(ps: Obj): Finding[] {
  const spec = obj(ps.spec);
  if (!spec) return [];
  return [
    ...checkRefresh(spec.refreshInterval),
    ...checkSelector(obj(spec.selector)),
    ...checkStoreRefs(spec),
    ...checkDataTo(spec),
    ...list(spec.data).flatMap((d, i) =>
      vaultPathFindings(
        obj(obj(obj(d)?.match)?.remoteRef)?.remoteKey,
        `spec.data[${i}].match.remoteRef.remoteKey`,
        'eso.ps.vault-path',
      ),
    ),
    ...checkTemplate_(obj(spec.template)),
  ];
}

function checkRefresh(value: unknown): Finding[] {
  return refreshIntervalFindings(value, 'eso.ps.refresh-interval');
}

function checkSelector(selector: Obj | undefined): Finding[] {
  if (!selector) return [];
  const out: Finding[] = [];
  if (has(selector, 'generatorRef'))
    out.push(
      deny(
        'spec.selector.generatorRef',
        'eso.ps.unsupported',
        'generatorRef (generators) is not supported by vaultgate; push an existing Secret (selector.secret).',
      ),
    );
  const secret = obj(selector.secret);
  if (secret) {
    if (!str(secret.name) && !has(secret, 'selector'))
      out.push(
        deny(
          'spec.selector.secret',
          'eso.ps.selector',
          'selector.secret needs a name or a selector (ESO: "no secret selector provided").',
        ),
      );
    if (str(secret.name) && has(secret, 'selector'))
      out.push(
        warn(
          'spec.selector.secret.selector',
          'eso.ps.selector',
          'name and selector are both set: as ESO, only the Secret named is pushed.',
        ),
      );
    for (const p of selectorProblems(obj(secret.selector)))
      out.push(deny(`spec.selector.secret.selector.${p.field}`, 'eso.ps.selector', p.message));
  }
  return out;
}

const storeKey = (r: Obj | undefined): string => `${str(r?.kind) ?? 'SecretStore'}/${str(r?.name) ?? ''}`;

function checkStoreRefs(spec: Obj): Finding[] {
  const out: Finding[] = [];
  list(spec.secretStoreRefs).forEach((ref, i) => {
    const r = obj(ref);
    const field = `spec.secretStoreRefs[${i}]`;
    if (!str(r?.name) && !has(r, 'labelSelector'))
      out.push(
        deny(
          field,
          'eso.ps.store-ref',
          'a store reference needs a name or a labelSelector (ESO: "refStore Name must be provided").',
        ),
      );
    for (const p of selectorProblems(obj(r?.labelSelector)))
      out.push(deny(`${field}.labelSelector.${p.field}`, 'eso.ps.selector', p.message));
  });
  if (list(spec.data).length === 0 && list(spec.dataTo).length === 0) {
    out.push(warn('spec', 'eso.ps.nothing-to-push', 'neither data nor dataTo is set: nothing is pushed.'));
  }
  return out;
}

function checkDataTo(spec: Obj): Finding[] {
  const out: Finding[] = [];
  const named = new Set(
    list(spec.secretStoreRefs)
      .map((r) => obj(r))
      .filter((r) => str(r?.name))
      .map(storeKey),
  );
  list(spec.dataTo).forEach((entry, i) => {
    const d = obj(entry) ?? {};
    const field = `spec.dataTo[${i}]`;
    const ref = obj(d.storeRef);
    if (!str(ref?.name) && !has(ref, 'labelSelector'))
      out.push(deny(`${field}.storeRef`, 'eso.ps.datato-store', 'storeRef must specify either name or labelSelector.'));
    else if (str(ref?.name) && !named.has(storeKey(ref)))
      out.push(
        deny(
          `${field}.storeRef.name`,
          'eso.ps.datato-store',
          `storeRef ${JSON.stringify(str(ref?.name))} not found in secretStoreRefs.`,
        ),
      );
    out.push(...vaultPathFindings(d.remoteKey, `${field}.remoteKey`, 'eso.ps.vault-path'));
    if (str(d.remoteKey) && list(d.rewrite).length > 0)
      out.push(
        deny(
          `${field}.rewrite`,
          'eso.ps.datato-rewrite',
          'remoteKey and rewrite are mutually exclusive: rewrite is only supported in per-key mode (without remoteKey).',
        ),
      );
    const re = str(obj(d.match)?.regexp);
    if (re) out.push(...regexp(re, `${field}.match.regexp`));
    list(d.rewrite).forEach((rw, j) => {
      const r = obj(rw);
      const source = str(obj(r?.regexp)?.source);
      if (source !== undefined) out.push(...regexp(source, `${field}.rewrite[${j}].regexp.source`));
      const tpl = str(obj(r?.transform)?.template);
      if (tpl !== undefined) {
        for (const issue of checkTemplate(tpl))
          out.push(
            deny(
              `${field}.rewrite[${j}].transform.template`,
              issue.kind === 'syntax' ? 'eso.ps.template-syntax' : 'eso.ps.template-unsupported',
              issue.message,
            ),
          );
      }
    });
  });
  return out;
}

function regexp(source: string, field: string): Finding[] {
  const compiled = parseGoRegexp(source);
  return compiled.ok ? [] : [deny(field, 'eso.ps.regexp', `${compiled.error}.`)];
}

/** spec.template is an ExternalSecret template: the same checks, reported under spec.template. */
function checkTemplate_(template: Obj | undefined): Finding[] {
  if (!template) return [];
  const probe = {
    spec: { secretStoreRef: { name: 'x' }, data: [{ secretKey: 'x', remoteRef: { key: 'x' } }], target: { template } },
  };
  return validateExternalSecret(probe).map((f) => ({
    ...f,
    field: f.field.replace(/^spec\.target\.template/, 'spec.template'),
  }));
}
