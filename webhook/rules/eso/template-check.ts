// A lexer for Go text/template syntax (the grammar of ESO's template engine v2, default `{{ }}`
// delimiters) and a checker that finds what vaultgate's template subset (template-subset.ts) does not
// cover. The lexer follows text/template/parse/lex.go closely (trim markers, comments, quoted, raw and
// character strings, numbers, fields, variables); its errors use Go's wording. The controller's
// template engine can reuse `lexTemplate` so both sides read templates the same way.
// Messages never repeat template text: a template may embed literal secret material.
import { GO_TEMPLATE_KEYWORDS, SUPPORTED_TEMPLATE_FUNCTIONS, isSupportedTemplateFunction, isSupportedTemplateKeyword } from './template-subset.ts';

export type TemplateTokenType =
  | 'text' | 'leftDelim' | 'rightDelim' | 'identifier' | 'keyword' | 'field' | 'variable' | 'dot'
  | 'string' | 'rawString' | 'char' | 'number' | 'bool' | 'nil' | 'pipe' | 'leftParen' | 'rightParen'
  | 'declare' | 'assign' | 'comma';

export interface TemplateToken {
  type: TemplateTokenType;
  /** Source text; for `text` tokens, with `{{-`/`-}}` trimming already applied. */
  value: string;
  /** Offset in the template. */
  pos: number;
}

export interface TemplateLex {
  tokens: TemplateToken[];
  error?: { message: string; pos: number };
}

const KEYWORDS = new Set(GO_TEMPLATE_KEYWORDS);
const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlnum = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);

export function lexTemplate(src: string): TemplateLex {
  const tokens: TemplateToken[] = [];
  let i = 0;
  let trimNextText = false;
  const fail = (message: string, pos: number): TemplateLex => ({ tokens, error: { message, pos } });

  while (i < src.length) {
    const open = src.indexOf('{{', i);
    let text = src.slice(i, open < 0 ? src.length : open);
    const trimLeft = open >= 0 && src[open + 2] === '-' && isSpace(src[open + 3]);
    if (trimNextText) text = text.replace(/^[ \t\r\n]+/, '');
    if (trimLeft) text = text.replace(/[ \t\r\n]+$/, '');
    if (text !== '') tokens.push({ type: 'text', value: text, pos: i });
    trimNextText = false;
    if (open < 0) break;

    tokens.push({ type: 'leftDelim', value: trimLeft ? '{{- ' : '{{', pos: open });
    i = open + 2 + (trimLeft ? 2 : 0);

    if (src.startsWith('/*', i)) {
      const close = src.indexOf('*/', i + 2);
      if (close < 0) return fail('unclosed comment', i);
      let j = close + 2;
      let trimRight = false;
      if (isSpace(src[j]) && src[j + 1] === '-' && src.startsWith('}}', j + 2)) { trimRight = true; j += 2; }
      if (!src.startsWith('}}', j)) return fail('comment ends before closing delimiter', close);
      tokens.pop(); // a comment is not an action
      i = j + 2;
      trimNextText = trimRight;
      continue;
    }

    let parens = 0;
    let closed = false;
    while (i < src.length) {
      const c = src[i];
      if (isSpace(c) && src[i + 1] === '-' && src.startsWith('}}', i + 2)) {
        if (parens > 0) return fail('unclosed left paren', i);
        tokens.push({ type: 'rightDelim', value: ' -}}', pos: i });
        i += 4;
        trimNextText = true;
        closed = true;
        break;
      }
      if (src.startsWith('}}', i)) {
        if (parens > 0) return fail('unclosed left paren', i);
        tokens.push({ type: 'rightDelim', value: '}}', pos: i });
        i += 2;
        closed = true;
        break;
      }
      const start = i;
      if (isSpace(c)) { i++; continue; }
      if (c === '"' || c === "'") {
        i++;
        while (i < src.length && src[i] !== c) {
          if (src[i] === '\\') i++;
          else if (src[i] === '\n') break;
          i++;
        }
        if (src[i] !== c) return fail(c === '"' ? 'unterminated quoted string' : 'unterminated character constant', start);
        i++;
        tokens.push({ type: c === '"' ? 'string' : 'char', value: src.slice(start, i), pos: start });
        continue;
      }
      if (c === '`') {
        const close = src.indexOf('`', i + 1);
        if (close < 0) return fail('unterminated raw quoted string', start);
        i = close + 1;
        tokens.push({ type: 'rawString', value: src.slice(start, i), pos: start });
        continue;
      }
      if (/[0-9]/.test(c ?? '') || ((c === '-' || c === '+' || c === '.') && /[0-9]/.test(src[i + 1] ?? ''))) {
        const m = /^[+-]?(0[xX][0-9a-fA-F_]*(\.[0-9a-fA-F_]*)?([pP][+-]?[0-9_]+)?|0[oObB][0-7_]*|[0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9_]+)?)i?/.exec(src.slice(i));
        i += m?.[0].length ?? 1;
        if (isAlnum(src[i])) return fail('bad number syntax', start);
        tokens.push({ type: 'number', value: src.slice(start, i), pos: start });
        continue;
      }
      if (c === '.' || c === '$') {
        i++;
        while (isAlnum(src[i])) i++;
        const value = src.slice(start, i);
        tokens.push({ type: c === '$' ? 'variable' : value === '.' ? 'dot' : 'field', value, pos: start });
        continue;
      }
      if (/[A-Za-z_]/.test(c ?? '')) {
        while (isAlnum(src[i])) i++;
        const value = src.slice(start, i);
        const type: TemplateTokenType = KEYWORDS.has(value) ? 'keyword'
          : value === 'true' || value === 'false' ? 'bool' : value === 'nil' ? 'nil' : 'identifier';
        tokens.push({ type, value, pos: start });
        continue;
      }
      if (c === ':' && src[i + 1] === '=') { tokens.push({ type: 'declare', value: ':=', pos: i }); i += 2; continue; }
      const single: Record<string, TemplateTokenType> = { '|': 'pipe', '(': 'leftParen', ')': 'rightParen', ',': 'comma', '=': 'assign' };
      const type = single[c ?? ''];
      if (!type) return fail(`bad character ${JSON.stringify(c)}`, start);
      if (type === 'leftParen') parens++;
      if (type === 'rightParen' && --parens < 0) return fail('unexpected right paren', start);
      tokens.push({ type, value: c ?? '', pos: start });
      i++;
    }
    if (!closed) return fail('unclosed action', open);
  }
  return { tokens };
}

export interface TemplateIssue {
  kind: 'syntax' | 'function' | 'keyword' | 'variable';
  /** Function or keyword name (code, never template text). */
  name?: string;
  line: number;
  column: number;
  message: string;
}

function lineColumn(src: string, pos: number): { line: number; column: number } {
  const before = src.slice(0, pos);
  const line = before.split('\n').length;
  return { line, column: pos - before.lastIndexOf('\n') };
}

/** What in a template falls outside vaultgate's subset (or is not valid Go template syntax). [] = fine. */
export function checkTemplate(src: string): TemplateIssue[] {
  const issues: TemplateIssue[] = [];
  const at = (pos: number) => lineColumn(src, pos);
  const syntax = (message: string, pos: number): TemplateIssue[] => {
    const { line, column } = at(pos);
    return [...issues, { kind: 'syntax', line, column, message: `template syntax error at line ${line}, column ${column}: ${message}` }];
  };
  const lexed = lexTemplate(src);
  if (lexed.error) return syntax(lexed.error.message, lexed.error.pos);

  const reported = new Set<string>();
  const blocks: number[] = [];
  let action: TemplateToken[] = [];
  let actionPos = 0;
  for (const tok of lexed.tokens) {
    if (tok.type === 'leftDelim') { action = []; actionPos = tok.pos; continue; }
    if (tok.type !== 'rightDelim') { if (tok.type !== 'text') action.push(tok); continue; }

    const [first, second] = action;
    if (!first) return syntax('missing value for command', actionPos);
    if (first.type === 'keyword') {
      if (!isSupportedTemplateKeyword(first.value)) {
        const key = `keyword:${first.value}`;
        if (!reported.has(key)) {
          reported.add(key);
          const where = at(first.pos);
          issues.push({ kind: 'keyword', name: first.value, ...where, message: `template action "${first.value}" at line ${where.line}, column ${where.column} is not supported by vaultgate (only if, else and end are)` });
        }
        if (first.value === 'end') blocks.pop();
        if (['range', 'with', 'define', 'block'].includes(first.value)) blocks.push(first.pos);
        continue;
      }
      if (first.value === 'if' && action.length === 1) return syntax('missing value for if', first.pos);
      if (first.value === 'else') {
        if (blocks.length === 0) return syntax('unexpected {{else}}', first.pos);
        if (second && !(second.type === 'keyword' && second.value === 'if')) return syntax('unexpected token after else', second.pos);
        if (second && action.length === 2) return syntax('missing value for if', second.pos);
      }
      if (first.value === 'end') {
        if (action.length > 1) return syntax('unexpected token after end', action[1]?.pos ?? first.pos);
        if (blocks.pop() === undefined) return syntax('unexpected {{end}}', first.pos);
      }
      if (first.value === 'if') blocks.push(first.pos);
    }
    for (const [n, t] of action.entries()) {
      if (t.type === 'keyword' && n > 0 && !(n === 1 && first.value === 'else' && t.value === 'if')) {
        return syntax(`unexpected <${t.value}> in command`, t.pos);
      }
      if (t.type === 'identifier' && !isSupportedTemplateFunction(t.value) && !reported.has(`function:${t.value}`)) {
        reported.add(`function:${t.value}`);
        const where = at(t.pos);
        issues.push({
          kind: 'function', name: t.value, ...where,
          message: `template function "${t.value}" at line ${where.line}, column ${where.column} is not supported by vaultgate (supported: ${SUPPORTED_TEMPLATE_FUNCTIONS.join(', ')})`,
        });
      }
      if ((t.type === 'variable' || t.type === 'declare' || t.type === 'assign') && !reported.has('variable')) {
        reported.add('variable');
        const where = at(t.pos);
        issues.push({ kind: 'variable', ...where, message: `template variables ($, $name, :=) are not supported by vaultgate (first at line ${where.line}, column ${where.column})` });
      }
    }
  }
  if (blocks.length > 0) return syntax('unexpected EOF (an {{if}} has no {{end}})', src.length);
  return issues;
}
