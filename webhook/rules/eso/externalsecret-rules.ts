// Admission rules for ExternalSecret: ESO's own (apis/externalsecrets/v1/externalsecret_validator.go,
// with ESO's error strings) plus vaultgate's: every ESO feature the controller does not implement is
// refused by name instead of being silently dropped, templates must stay within the supported subset,
// regular expressions must compile as Go's RE2 would. Pure: the controller re-runs it as defence in depth.
import type { Finding } from '../../admission/kinds.ts';
import { type Obj, child, deny, has, list, obj, str, warn } from './access.ts';
import { parseGoRegexp, parseGoDuration } from '../../../golang/index.ts';
import { checkTemplate } from '../../../eso/template.ts';
import { vaultPathFindings } from './vault-path.ts';
import { checkRolloutTargets } from './rollout-targets.ts';
import { SYNC_WINDOW_RULE, syncWindowProblems } from '../../../eso/sync-windows.ts';
import { GENERATOR_API_VERSION, GENERATOR_KINDS } from '../../../schemas/generator-kinds.ts';

/** ESO ExternalSecret features vaultgate refuses at admission (each named in its finding). */
export const EXTERNALSECRET_FEATURES_NOT_SUPPORTED: readonly string[] = [
  'spec.target.manifest (generic targets)',
  'spec.data[].sourceRef.generatorRef (ESO ignores it there), spec.dataFrom[].sourceRef.generatorRef to generators other than Password, VaultDynamicSecret and ClusterGenerator of those',
  'template functions ESO has that vaultgate does not render (eso/template-supported.ts, each with its reason)',
];

const TEMPLATE_TARGETS = ['Data', 'Annotations', 'Labels'];
const SA_TOKEN_TYPE = 'kubernetes.io/service-account-token';
const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
const BOOTSTRAP_TOKEN_TYPE = 'bootstrap.kubernetes.io/token';

const unsupported = (field: string, what: string, hint = ''): Finding =>
  deny(field, 'eso.es.unsupported', `${what} is not supported by vaultgate${hint ? `; ${hint}` : ''}.`);

export function validateExternalSecret(es: Obj): Finding[] {
  const spec = obj(es.spec);
  if (!spec) return [];
  const target = obj(spec.target);
  const template = obj(target?.template);
  // CRD defaults (target: {creationPolicy: Owner, deletionPolicy: Retain}) may not be applied yet offline.
  const creationPolicy = str(target?.creationPolicy) ?? 'Owner';
  const deletionPolicy = str(target?.deletionPolicy) ?? 'Retain';
  return [
    ...checkPolicies(creationPolicy, deletionPolicy),
    ...checkStoreRef(spec),
    ...checkRefreshInterval(spec.refreshInterval),
    ...checkSyncWindows(obj(spec.syncWindows)),
    ...checkData(spec, deletionPolicy),
    ...checkDataFrom(spec),
    ...checkTarget(spec, target, template),
    ...checkRolloutTargets(es),
  ];
}

function checkPolicies(creation: string, deletion: string): Finding[] {
  const findings: Finding[] = [];
  if (deletion === 'Delete' && ['Merge', 'None', 'CreateOrMerge'].includes(creation)) {
    findings.push(
      deny(
        'spec.target.deletionPolicy',
        'eso.es.deletion-policy',
        "deletionPolicy=Delete must not be used when the controller doesn't own the secret. Please set creationPolicy=Owner.",
      ),
    );
  }
  if (deletion === 'Merge' && creation === 'None') {
    findings.push(
      deny(
        'spec.target.deletionPolicy',
        'eso.es.deletion-policy',
        'deletionPolicy=Merge must not be used with creationPolicy=None. There is no Secret to merge with.',
      ),
    );
  }
  return findings;
}

function checkStoreRef(spec: Obj): Finding[] {
  if (str(obj(spec.secretStoreRef)?.name)) return [];
  // ESO lets every entry name its own store (sourceRef.storeRef) instead; an entry without one would
  // read from a store with no name, which ESO only reports at sync.
  // A generator needs no store (dataFrom[].sourceRef.generatorRef).
  const entries = [...list(spec.data), ...list(spec.dataFrom)];
  const sourced = (e: unknown): boolean =>
    Boolean(str(obj(obj(obj(e)?.sourceRef)?.storeRef)?.name)) || has(obj(obj(e)?.sourceRef), 'generatorRef');
  if (entries.length > 0 && entries.every(sourced)) return [];
  return [
    deny(
      'spec.secretStoreRef.name',
      'eso.es.store-required',
      'secretStoreRef.name is required unless every data and dataFrom entry names its store in sourceRef.storeRef.',
    ),
  ];
}

/** spec.syncWindows: schedules and durations as ESO's controller parses them (robfig/cron, Go durations). */
function checkSyncWindows(sw: Obj | undefined): Finding[] {
  if (!sw) return [];
  return syncWindowProblems(sw).map((p) => {
    const field = `spec.syncWindows.windows[${p.index}].${p.field}`;
    return p.warning
      ? warn(field, SYNC_WINDOW_RULE, `${p.message}.`)
      : deny(
          field,
          SYNC_WINDOW_RULE,
          `${p.field === 'schedule' ? 'schedule is not a cron expression' : 'duration is not a duration'}: ${p.message}.`,
        );
  });
}

function checkRefreshInterval(value: unknown): Finding[] {
  return refreshIntervalFindings(value, 'eso.es.refresh-interval', '; use "0" to fetch once');
}

/** spec.refreshInterval (ExternalSecret, PushSecret): a Go duration, not negative; `hint` ends that message. */
export function refreshIntervalFindings(value: unknown, rule: string, negativeHint = ''): Finding[] {
  if (typeof value !== 'string') return [];
  const parsed = parseGoDuration(value);
  if (!parsed.ok) return [deny('spec.refreshInterval', rule, `refreshInterval is not a duration: ${parsed.error}.`)];
  if (parsed.ms < 0)
    return [
      deny(
        'spec.refreshInterval',
        rule,
        `refreshInterval must not be negative (got ${JSON.stringify(value)})${negativeHint}.`,
      ),
    ];
  return [];
}

function checkSourceRef(sourceRef: Obj | undefined, field: string): Finding[] {
  if (!has(sourceRef, 'generatorRef')) return [];
  return [unsupported(`${field}.generatorRef`, 'generatorRef (generators)')];
}

/** dataFrom[].sourceRef.generatorRef: ESO's generators vaultgate serves (webhook/rules/eso/generator-rules.ts). */
function checkGeneratorRef(sourceRef: Obj | undefined, field: string): Finding[] {
  const ref = obj(sourceRef?.generatorRef);
  if (!has(sourceRef, 'generatorRef')) return [];
  const f = `${field}.generatorRef`;
  if (str(ref?.apiVersion) !== GENERATOR_API_VERSION)
    return [deny(`${f}.apiVersion`, 'eso.es.generator-ref', `apiVersion must be ${GENERATOR_API_VERSION}.`)];
  const kind = str(ref?.kind) ?? '';
  if (!(GENERATOR_KINDS as readonly string[]).includes(kind))
    return [
      unsupported(`${f}.kind`, `generator kind ${JSON.stringify(kind)}`, `use one of ${GENERATOR_KINDS.join(', ')}`),
    ];
  if (!str(ref?.name)) return [deny(`${f}.name`, 'eso.es.generator-ref', 'name of the generator is required.')];
  return [];
}

function checkData(spec: Obj, deletionPolicy: string): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  list(spec.data).forEach((entry, i) => {
    const e = obj(entry);
    const field = `spec.data[${i}]`;
    findings.push(...checkSourceRef(obj(e?.sourceRef), `${field}.sourceRef`));
    findings.push(...vaultPathFindings(obj(e?.remoteRef)?.key, `${field}.remoteRef.key`, 'eso.es.vault-path'));
    const key = str(e?.secretKey);
    if (key === undefined) return;
    if (seen.has(key)) {
      // ESO refuses duplicates only with deletionPolicy=Retain; otherwise the later entry wins.
      findings.push(
        deletionPolicy === 'Retain'
          ? deny(`${field}.secretKey`, 'eso.es.duplicate-key', `duplicate secretKey found: ${key}.`)
          : warn(
              `${field}.secretKey`,
              'eso.es.duplicate-key',
              `duplicate secretKey ${key}: the later entry overwrites the earlier one.`,
            ),
      );
    }
    seen.add(key);
  });
  return findings;
}

function checkDataFrom(spec: Obj): Finding[] {
  const findings: Finding[] = [];
  const dataFrom = list(spec.dataFrom);
  if (list(spec.data).length === 0 && dataFrom.length === 0) {
    findings.push(deny('spec', 'eso.es.data-required', 'either data or dataFrom should be specified.'));
  }
  dataFrom.forEach((entry, i) => {
    const e = obj(entry) ?? {};
    const field = `spec.dataFrom[${i}]`;
    const sourceRef = obj(e.sourceRef);
    const sources = [has(e, 'extract'), has(e, 'find'), has(sourceRef, 'generatorRef')].filter(Boolean).length;
    if (sources > 1)
      findings.push(
        deny(field, 'eso.es.datafrom-exclusive', 'extract, find, or generatorRef cannot be set at the same time.'),
      );
    if (!has(e, 'extract') && !has(e, 'find') && !sourceRef) {
      findings.push(
        deny(field, 'eso.es.datafrom-empty', 'either extract, find, or sourceRef must be set to dataFrom.'),
      );
    }
    if (sourceRef && !has(sourceRef, 'generatorRef') && !has(sourceRef, 'storeRef')) {
      findings.push(
        deny(
          `${field}.sourceRef`,
          'eso.es.sourceref',
          'generatorRef or storeRef must be set when using sourceRef in dataFrom.',
        ),
      );
    }
    findings.push(...checkGeneratorRef(sourceRef, `${field}.sourceRef`));

    findings.push(...vaultPathFindings(obj(e.extract)?.key, `${field}.extract.key`, 'eso.es.vault-path'));
    const find = obj(e.find);
    findings.push(...vaultPathFindings(find?.path, `${field}.find.path`, 'eso.es.vault-path'));
    const nameRe = str(obj(find?.name)?.regexp);
    if (nameRe !== undefined) findings.push(...checkRegexp(nameRe, `${field}.find.name.regexp`));

    list(e.rewrite).forEach((rw, j) => {
      const r = obj(rw);
      const rField = `${field}.rewrite[${j}]`;
      const merge = obj(r?.merge);
      if (merge?.strategy === 'JSON' && !str(merge.into)) {
        // ESO admits it and fails every sync with "merge failed with missing 'into' field".
        findings.push(
          deny(
            `${rField}.merge.into`,
            'eso.es.rewrite-merge',
            'merge with strategy JSON needs into: the key that receives the merged JSON object.',
          ),
        );
      }
      const source = str(obj(r?.regexp)?.source);
      if (source !== undefined) findings.push(...checkRegexp(source, `${rField}.regexp.source`));
      const tpl = str(obj(r?.transform)?.template);
      if (tpl !== undefined) findings.push(...checkTemplateText(tpl, `${rField}.transform.template`));
    });
  });
  return findings;
}

function checkTarget(spec: Obj, target: Obj | undefined, template: Obj | undefined): Finding[] {
  const findings: Finding[] = [];
  if (has(target, 'manifest'))
    findings.push(
      unsupported('spec.target.manifest', 'a generic (non-Secret) target', 'vaultgate only writes Secrets'),
    );
  if (!template) return findings;

  const metadata = obj(template.metadata);

  // Privileged Secret types (ESO validatePrivilegedTemplate): no long-lived tokens beyond the RBAC in place.
  const type = str(template.type);
  const templateFrom = list(template.templateFrom).map((t) => obj(t) ?? {});
  if (type === SA_TOKEN_TYPE) {
    if (has(obj(metadata?.annotations), SA_NAME_ANNOTATION)) {
      findings.push(
        deny(
          'spec.target.template.type',
          'eso.es.privileged-template',
          `template.type="${SA_TOKEN_TYPE}" with annotation "${SA_NAME_ANNOTATION}" is not allowed.`,
        ),
      );
    } else if (templateFrom.some((tf) => str(tf.target)?.toLowerCase() === 'annotations')) {
      findings.push(
        deny(
          'spec.target.template.type',
          'eso.es.privileged-template',
          `template.type="${SA_TOKEN_TYPE}" with templateFrom target="Annotations" is not allowed.`,
        ),
      );
    }
  }
  if (type === BOOTSTRAP_TOKEN_TYPE) {
    findings.push(
      deny(
        'spec.target.template.type',
        'eso.es.privileged-template',
        `template.type="${BOOTSTRAP_TOKEN_TYPE}" is not allowed.`,
      ),
    );
  }

  for (const [key, value] of Object.entries(obj(template.data) ?? {})) {
    if (typeof value === 'string') findings.push(...checkTemplateText(value, child('spec.target.template.data', key)));
  }
  // ESO renders metadata.labels and .annotations as templates too (engine v2).
  for (const part of ['labels', 'annotations'] as const) {
    for (const [key, value] of Object.entries(obj(metadata?.[part]) ?? {})) {
      if (typeof value === 'string')
        findings.push(...checkTemplateText(value, child(`spec.target.template.metadata.${part}`, key)));
    }
  }
  templateFrom.forEach((tf, i) => {
    const field = `spec.target.template.templateFrom[${i}]`;
    const targetName = str(tf.target) ?? '';
    // ESO ValidateSecretTemplateFromTargets: other targets are dotted paths into the object and could
    // write type, immutable or ownerReferences, sidestepping the privileged-type check.
    if (targetName !== '' && !TEMPLATE_TARGETS.some((t) => t.toLowerCase() === targetName.toLowerCase())) {
      findings.push(
        deny(
          `${field}.target`,
          'eso.es.template-target',
          `templateFrom target=${JSON.stringify(targetName)} is not allowed when targeting a Secret, must be one of "Data", "Annotations" or "Labels".`,
        ),
      );
    }
    const literal = str(tf.literal);
    if (literal !== undefined) findings.push(...checkTemplateText(literal, `${field}.literal`));
  });
  return findings;
}

function checkTemplateText(text: string, field: string): Finding[] {
  return checkTemplate(text).map((issue) =>
    deny(field, issue.kind === 'syntax' ? 'eso.es.template-syntax' : 'eso.es.template-unsupported', issue.message),
  );
}

function checkRegexp(source: string, field: string): Finding[] {
  const compiled = parseGoRegexp(source);
  return compiled.ok ? [] : [deny(field, 'eso.es.regexp', `${compiled.error}.`)];
}
