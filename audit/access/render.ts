// Human renderings of the access report: a terminal table and a self-contained HTML page (inline CSS,
// no scripts, no external assets: it can be mailed, attached to a ticket or opened offline).
import type { AccessReport, Severity } from './report.ts';
import type { EffectiveCapability } from '../../policy/acl.ts';

function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows)
    r.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function renderAccessText(report: AccessReport): string {
  const out: string[] = [];
  const s = report.summary;
  out.push(
    `vaultgate access report (${report.source}): ${s.subjects} ServiceAccounts, ${s.roles} roles, ${s.policies} policies, ${s.patterns} path patterns`,
  );
  out.push('');
  const q = report.query;
  if (q?.type === 'who-can') {
    out.push(`WHO CAN ${q.capability.toUpperCase()} ${q.path}`);
    if (q.allowed.length === 0) out.push('  nobody');
    else
      out.push(
        table([
          ['  SUBJECT', 'ROLE', 'MATCHED PATTERN', 'POLICIES'],
          ...q.allowed.map((e) => [`  ${e.subject}`, e.role, e.matchedPattern ?? '', e.policies.join(', ')]),
        ]),
      );
    if (q.denied.length) out.push(`  (${q.denied.length} other role bindings do not allow it)`);
    out.push('');
  } else if (q?.type === 'subject') {
    out.push(`WHAT CAN ${q.subject} DO`);
    if (!q.found)
      out.push('  no VaultRoleBinding names this ServiceAccount: it cannot log in to Vault through vaultgate');
    else
      out.push(
        table([
          ['  PATTERN', 'CAPABILITIES', 'ROLE', 'POLICIES'],
          ...q.grants.map((g) => [`  ${g.pattern}`, g.capabilities.join(' '), g.role, g.policies.join(', ')]),
        ]),
      );
    out.push('');
  }
  if (!q) {
    out.push('ACCESS (capabilities on a typical path each pattern matches)');
    const rows: string[][] = [['  SUBJECT', 'PATTERN', 'CAPABILITIES']];
    report.matrix.subjects.forEach((subj, i) =>
      report.matrix.patterns.forEach((p, j) => {
        const caps = report.matrix.cells[i]?.[j] ?? [];
        if (caps.length) rows.push([`  ${subj}`, p, caps.join(' ')]);
      }),
    );
    out.push(rows.length > 1 ? table(rows) : '  no ServiceAccount has any access');
    out.push('');
  }
  const f = report.findings;
  if (q) {
    out.push(`${f.length} findings (${s.findings.high} high); run without a query to list them`);
    return `${out.join('\n')}\n`;
  }
  out.push(
    `FINDINGS (${f.length}: ${(['high', 'medium', 'low', 'info'] as Severity[]).map((sev) => `${s.findings[sev]} ${sev}`).join(', ')})`,
  );
  if (f.length === 0) out.push('  none');
  else
    out.push(
      table([
        ['  SEVERITY', 'FINDING', 'OBJECT', 'DETAIL'],
        ...f.map((x) => [`  ${x.severity.toUpperCase()}`, x.id, x.object, x.message]),
      ]),
    );
  return `${out.join('\n')}\n`;
}

const esc = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const CAP_CLASS: Record<string, string> = {
  read: 'r',
  list: 'r',
  scan: 'r',
  subscribe: 'r',
  create: 'w',
  update: 'w',
  patch: 'w',
  recover: 'w',
  delete: 'd',
  sudo: 's',
  root: 's',
};

function chips(caps: readonly EffectiveCapability[]): string {
  return caps.map((c) => `<span class="cap ${CAP_CLASS[c] ?? ''}">${esc(c)}</span>`).join('');
}

const CSS = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1d2330;--muted:#667085;--line:#e4e7ec;--hi:#b42318;--me:#b54708;--lo:#175cd3;--in:#475467}
*{box-sizing:border-box}body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--ink)}
header{background:#101828;color:#fff;padding:20px 32px}header h1{margin:0 0 4px;font-size:20px}header p{margin:0;color:#d0d5dd}
main{padding:24px 32px;max-width:1600px}section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:18px 20px;margin-bottom:20px}
h2{font-size:16px;margin:0 0 12px}.cards{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:20px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px;min-width:130px}.card b{display:block;font-size:22px}.card span{color:var(--muted);font-size:12px}
.card.high b{color:var(--hi)}.card.medium b{color:var(--me)}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid var(--line);padding:6px 8px;text-align:left;vertical-align:top}
th{font-size:12px;color:var(--muted);font-weight:600;background:#fafbfc}
.matrix{overflow:auto}.matrix th.p{vertical-align:bottom;text-align:center;padding:6px 4px}
.matrix th.p div{writing-mode:vertical-rl;transform:rotate(180deg);margin:0 auto;white-space:nowrap;font-family:ui-monospace,Menlo,monospace;font-weight:500;color:var(--ink);max-height:260px;overflow:hidden;text-overflow:ellipsis}
.matrix td{text-align:center;min-width:44px;border-left:1px solid var(--line)}.matrix td .cap{display:block;width:max-content;margin:2px auto}.matrix td.s,.matrix th.s{text-align:left;white-space:nowrap;font-family:ui-monospace,Menlo,monospace;position:sticky;left:0;background:#fff}
.matrix td.empty{background:#fafbfc}
.cap{display:inline-block;margin:1px;padding:0 6px;border-radius:9px;font-size:11px;line-height:18px;border:1px solid transparent}
.cap.r{background:#ecfdf3;color:#067647;border-color:#abefc6}.cap.w{background:#fffaeb;color:#b54708;border-color:#fedf89}
.cap.d{background:#fef3f2;color:#b42318;border-color:#fecdca}.cap.s{background:#b42318;color:#fff}
.sev{display:inline-block;padding:1px 8px;border-radius:9px;font-size:11px;font-weight:700;text-transform:uppercase;color:#fff}
.sev.high{background:var(--hi)}.sev.medium{background:var(--me)}.sev.low{background:var(--lo)}.sev.info{background:var(--in)}
code{font-family:ui-monospace,Menlo,monospace;font-size:12.5px}.muted{color:var(--muted)}.ok{color:#067647;font-weight:600}.no{color:var(--hi);font-weight:600}
.legend{margin-top:10px;color:var(--muted);font-size:12px}
`;

export function renderAccessHtml(report: AccessReport): string {
  const s = report.summary;
  const parts: string[] = [];
  parts.push(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">`,
  );
  parts.push(`<title>vaultgate access report</title><style>${CSS}</style></head><body>`);
  parts.push(
    `<header><h1>Who can reach which Vault path</h1><p>vaultgate access report · ${esc(report.source)} · generated ${esc(report.generatedAt)} · name prefix <code>${esc(report.prefix)}</code></p></header><main>`,
  );
  parts.push('<div class="cards">');
  for (const [n, label, cls] of [
    [s.subjects, 'ServiceAccounts', ''],
    [s.roles, 'Vault roles', ''],
    [s.policies, 'Vault policies', ''],
    [s.findings.high, 'high findings', 'high'],
    [s.findings.medium, 'medium findings', 'medium'],
    [s.findings.low + s.findings.info, 'low / info', ''],
  ] as const) {
    parts.push(`<div class="card ${cls}"><b>${n}</b><span>${label}</span></div>`);
  }
  parts.push('</div>');

  const q = report.query;
  if (q?.type === 'who-can') {
    parts.push(`<section><h2>Who can <code>${esc(q.capability)}</code> <code>${esc(q.path)}</code>?</h2>`);
    if (q.allowed.length === 0) parts.push('<p class="no">Nobody.</p>');
    else {
      parts.push(
        '<table><tr><th>ServiceAccount</th><th>Vault role</th><th>Matched pattern</th><th>Granted by</th></tr>',
      );
      for (const e of q.allowed)
        parts.push(
          `<tr><td><code>${esc(e.subject)}</code></td><td><code>${esc(e.role)}</code></td><td><code>${esc(e.matchedPattern ?? '')}</code></td><td>${esc(e.policies.join(', '))}</td></tr>`,
        );
      parts.push('</table>');
    }
    parts.push(`<p class="muted">${q.denied.length} other role binding(s) do not allow it.</p></section>`);
  } else if (q?.type === 'subject') {
    parts.push(`<section><h2>What can <code>${esc(q.subject)}</code> do?</h2>`);
    if (!q.found) parts.push('<p class="no">No VaultRoleBinding names this ServiceAccount.</p>');
    else {
      parts.push('<table><tr><th>Pattern</th><th>Capabilities</th><th>Vault role</th><th>Policies</th></tr>');
      for (const g of q.grants)
        parts.push(
          `<tr><td><code>${esc(g.pattern)}</code></td><td>${chips(g.capabilities)}</td><td><code>${esc(g.role)}</code></td><td>${esc(g.policies.join(', '))}</td></tr>`,
        );
      parts.push('</table>');
    }
    parts.push('</section>');
  }

  parts.push('<section><h2>Access matrix</h2><div class="matrix"><table><tr><th class="s">ServiceAccount</th>');
  for (const p of report.matrix.patterns) parts.push(`<th class="p" title="${esc(p)}"><div>${esc(p)}</div></th>`);
  parts.push('</tr>');
  report.matrix.subjects.forEach((subj, i) => {
    parts.push(`<tr><td class="s">${esc(subj)}</td>`);
    report.matrix.patterns.forEach((_, j) => {
      const caps = report.matrix.cells[i]?.[j] ?? [];
      parts.push(caps.length ? `<td>${chips(caps)}</td>` : '<td class="empty"></td>');
    });
    parts.push('</tr>');
  });
  if (report.matrix.subjects.length === 0)
    parts.push(
      `<tr><td class="muted" colspan="${report.matrix.patterns.length + 1}">No ServiceAccount is bound to any policy.</td></tr>`,
    );
  parts.push(
    '</table></div><p class="legend">Each cell: the capabilities Vault grants the ServiceAccount on a typical path the column\'s pattern matches (union over its roles). ',
  );
  parts.push(
    `${chips(['read', 'list'])} read · ${chips(['create', 'update'])} write · ${chips(['delete'])} delete · ${chips(['sudo'])} root-protected</p></section>`,
  );

  parts.push(`<section><h2>Findings (${report.findings.length})</h2>`);
  if (report.findings.length === 0) parts.push('<p class="ok">No findings.</p>');
  else {
    parts.push('<table><tr><th>Severity</th><th>Finding</th><th>Object</th><th>Path</th><th>Detail</th></tr>');
    for (const f of report.findings)
      parts.push(
        `<tr><td><span class="sev ${f.severity}">${f.severity}</span></td><td><code>${esc(f.id)}</code></td><td>${esc(f.object)}</td><td>${f.path ? `<code>${esc(f.path)}</code>` : ''}</td><td>${esc(f.message)}</td></tr>`,
      );
    parts.push('</table>');
  }
  parts.push('</section>');

  parts.push(
    '<section><h2>Role bindings</h2><table><tr><th>ServiceAccount</th><th>Vault role</th><th>Binding</th><th>Policies</th></tr>',
  );
  for (const sub of report.subjects)
    for (const r of sub.roles) {
      const missing = r.missingPolicies.map((m) => `<span class="no">${esc(m)} (missing)</span>`);
      parts.push(
        `<tr><td><code>${esc(sub.subject)}</code></td><td><code>${esc(r.mount)}/${esc(r.role)}</code></td><td>${esc(r.binding)}</td><td>${[...r.policies.map(esc), ...missing].join(', ')}</td></tr>`,
      );
    }
  parts.push('</table></section></main></body></html>\n');
  return parts.join('');
}
