// A parser for the part of Go's text/template syntax ESO's template engine v2 users write:
// text, `{{ pipeline }}` actions with `{{-`/`-}}` trimming, comments, pipes, parenthesised pipelines,
// fields (`.a.b`), variables (`$x := ...`, `$x = ...`, `$`), literals (Go string/raw/char/number, true,
// false, nil) and the control actions if / else if / else, range (with `$i, $v :=`), with, break,
// continue, end. `define`, `template` and `block` are refused with a clear message: ESO templates are
// single documents and vaultgate does not support named templates.

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
}

export type Node =
  | { type: 'text'; text: string }
  | { type: 'action'; pipe: Pipe }
  | { type: 'if' | 'with'; pipe: Pipe; list: Node[]; elseList?: Node[]; line: number }
  | { type: 'range'; pipe: Pipe; list: Node[]; elseList?: Node[]; line: number }
  | { type: 'break' | 'continue'; line: number };

export interface Pipe {
  decl: string[];
  /** `=` (assign an existing variable) rather than `:=`. */
  assign: boolean;
  cmds: Command[];
  line: number;
}

export interface Command {
  args: Arg[];
}

export type Arg =
  | { type: 'dot' }
  | { type: 'field'; chain: string[] }
  | { type: 'variable'; name: string; chain: string[] }
  | { type: 'identifier'; name: string }
  | { type: 'string'; value: string }
  | { type: 'number'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'nil' }
  | { type: 'pipe'; pipe: Pipe; chain: string[] };

type Tok =
  | { t: 'field'; v: string; adjacent: boolean }
  | { t: 'var'; v: string }
  | { t: 'ident'; v: string }
  | { t: 'string'; v: string }
  | { t: 'number'; v: number }
  | { t: 'dot' }
  | { t: 'declare' } | { t: 'assign' } | { t: 'pipe' } | { t: 'lparen' } | { t: 'rparen' } | { t: 'comma' };

const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue']);

interface RawAction { body: string; line: number }

/** Split the source into text and action bodies, applying the trim markers. */
function split(src: string): Array<string | RawAction> {
  const parts: Array<string | RawAction> = [];
  let i = 0;
  let pendingTrim = false;
  while (i <= src.length) {
    const open = src.indexOf('{{', i);
    let text = open < 0 ? src.slice(i) : src.slice(i, open);
    if (pendingTrim) text = text.replace(/^\s+/, '');
    if (open < 0) {
      if (text) parts.push(text);
      break;
    }
    let bodyStart = open + 2;
    if (src[bodyStart] === '-' && /\s/.test(src[bodyStart + 1] ?? '')) {
      text = text.replace(/\s+$/, '');
      bodyStart += 1;
    }
    if (text) parts.push(text);
    const line = lineOf(src, open);
    const close = findClose(src, bodyStart, line);
    let bodyEnd = close;
    pendingTrim = false;
    if (src[close - 1] === '-' && /\s/.test(src[close - 2] ?? '')) {
      bodyEnd = close - 1;
      pendingTrim = true;
    }
    parts.push({ body: src.slice(bodyStart, bodyEnd), line });
    i = close + 2;
  }
  return parts;
}

/** The index of the `}}` closing an action, skipping quoted strings and comments. */
function findClose(src: string, from: number, line: number): number {
  let i = from;
  while (i < src.length) {
    const c = src[i];
    if (c === '"' || c === '\'') {
      i++;
      while (i < src.length && src[i] !== c) {
        if (src[i] === '\\') i++;
        if (src[i] === '\n') throw new TemplateError(`line ${line}: unterminated quoted string`);
        i++;
      }
      i++;
      continue;
    }
    if (c === '`') {
      const end = src.indexOf('`', i + 1);
      if (end < 0) throw new TemplateError(`line ${line}: unterminated raw string`);
      i = end + 1;
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end < 0) throw new TemplateError(`line ${line}: unclosed comment`);
      i = end + 2;
      continue;
    }
    if (c === '}' && src[i + 1] === '}') return i;
    i++;
  }
  throw new TemplateError(`line ${line}: unclosed action (missing "}}")`);
}

function lineOf(src: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index; i++) if (src[i] === '\n') n++;
  return n;
}

function lex(body: string, line: number): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const err = (msg: string): never => {
    throw new TemplateError(`line ${line}: ${msg}`);
  };
  while (i < body.length) {
    const c = body[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === ':' && body[i + 1] === '=') { toks.push({ t: 'declare' }); i += 2; continue; }
    if (c === '=') { toks.push({ t: 'assign' }); i++; continue; }
    if (c === '|') { toks.push({ t: 'pipe' }); i++; continue; }
    if (c === '(') { toks.push({ t: 'lparen' }); i++; continue; }
    if (c === ')') { toks.push({ t: 'rparen' }); i++; continue; }
    if (c === ',') { toks.push({ t: 'comma' }); i++; continue; }
    if (c === '"') {
      let j = i + 1;
      while (j < body.length && body[j] !== '"') { if (body[j] === '\\') j++; j++; }
      if (j >= body.length) err('unterminated quoted string');
      toks.push({ t: 'string', v: unquoteGo(body.slice(i + 1, j), err) });
      i = j + 1;
      continue;
    }
    if (c === '`') {
      const j = body.indexOf('`', i + 1);
      if (j < 0) err('unterminated raw string');
      toks.push({ t: 'string', v: body.slice(i + 1, j).replace(/\r/g, '') });
      i = j + 1;
      continue;
    }
    if (c === '\'') {
      let j = i + 1;
      while (j < body.length && body[j] !== '\'') { if (body[j] === '\\') j++; j++; }
      if (j >= body.length) err('unterminated character constant');
      const s = unquoteGo(body.slice(i + 1, j), err);
      const cp = s.codePointAt(0);
      if (cp === undefined || [...s].length !== 1) err(`malformed character constant '${body.slice(i + 1, j)}'`);
      toks.push({ t: 'number', v: cp! });
      i = j + 1;
      continue;
    }
    if (c === '.' || c === '$') {
      const m = /^[.$][A-Za-z0-9_]*/.exec(body.slice(i))!;
      const word = m[0];
      if (c === '$') toks.push({ t: 'var', v: word });
      else if (word === '.') {
        if (/[0-9]/.test(body[i + 1] ?? '')) {
          const num = /^\.[0-9]+([eE][+-]?[0-9]+)?/.exec(body.slice(i))![0];
          toks.push({ t: 'number', v: Number(num) });
          i += num.length;
          continue;
        }
        toks.push({ t: 'dot' });
      } else toks.push({ t: 'field', v: word.slice(1), adjacent: toks.length > 0 && i > 0 && !/\s/.test(body[i - 1]!) });
      i += word.length;
      continue;
    }
    const num = /^[+-]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|[0-9][0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9]+)?)/.exec(body.slice(i));
    if (num && (/[0-9]/.test(c) || ((c === '+' || c === '-') && /[0-9]/.test(body[i + 1] ?? '')))) {
      const text = num[0].replace(/_/g, '');
      const v = /^[+-]?0[oO]/.test(text) ? parseInt(text.replace(/0[oO]/, ''), 8) : /^[+-]?0[bB]/.test(text) ? parseInt(text.replace(/0[bB]/, ''), 2) : Number(text);
      if (Number.isNaN(v)) err(`bad number syntax: "${num[0]}"`);
      toks.push({ t: 'number', v });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(body.slice(i));
    if (id) {
      toks.push({ t: 'ident', v: id[0] });
      i += id[0].length;
      continue;
    }
    err(`unexpected "${c}" in action`);
  }
  return toks;
}

/** Go interpreted-string escapes: \a \b \f \n \r \t \v \\ \" \' \xNN \NNN \uNNNN \UNNNNNNNN. */
function unquoteGo(s: string, err: (m: string) => never): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\n') err('newline in quoted string');
    if (c !== '\\') { out += c; continue; }
    const e = s[++i];
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', '\'': '\'' };
    if (e !== undefined && simple[e] !== undefined) { out += simple[e]; continue; }
    const hex = (len: number): number => {
      const h = s.slice(i + 1, i + 1 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) err(`invalid escape \\${e}${h}`);
      i += len;
      return parseInt(h, 16);
    };
    if (e === 'x') { out += String.fromCharCode(hex(2)); continue; }
    if (e === 'u') { out += String.fromCodePoint(hex(4)); continue; }
    if (e === 'U') { out += String.fromCodePoint(hex(8)); continue; }
    if (e !== undefined && /[0-7]/.test(e)) {
      const o = s.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(o)) err(`invalid escape \\${o}`);
      out += String.fromCharCode(parseInt(o, 8));
      i += 2;
      continue;
    }
    err(`unknown escape sequence \\${e ?? ''}`);
  }
  return out;
}

class ActionParser {
  private pos = 0;
  constructor(private readonly toks: Tok[], private readonly line: number) {}

  /** The keyword this action starts with (if, else, range, ...), consumed; undefined for a plain pipeline. */
  takeKeyword(): string | undefined {
    const head = this.toks[this.pos];
    if (head?.t !== 'ident' || !KEYWORDS.has(head.v)) return undefined;
    this.pos++;
    return head.v;
  }

  private err(msg: string): never {
    throw new TemplateError(`line ${this.line}: ${msg}`);
  }
  private peek(): Tok | undefined { return this.toks[this.pos]; }
  private next(): Tok | undefined { return this.toks[this.pos++]; }
  done(): boolean { return this.pos >= this.toks.length; }
  /** A field written right after the previous term (`$x.a`, `(pipe).a`, `.a.b`): part of its chain. */
  private peekChainedField(): string | undefined {
    const t = this.peek();
    return t?.t === 'field' && t.adjacent ? t.v : undefined;
  }

  /** pipeline: [decl (:=|=)] command ('|' command)*; `inRange` allows `$i, $v :=`. */
  pipeline(context: string, inRange = false, allowEmpty = false): Pipe {
    const decl: string[] = [];
    let assign = false;
    const save = this.pos;
    const first = this.peek();
    if (first?.t === 'var') {
      const vars: string[] = [first.v];
      let p = this.pos + 1;
      if (inRange && this.toks[p]?.t === 'comma' && this.toks[p + 1]?.t === 'var') {
        vars.push((this.toks[p + 1] as { v: string }).v);
        p += 2;
      }
      const op = this.toks[p];
      if (op?.t === 'declare' || op?.t === 'assign') {
        decl.push(...vars);
        assign = op.t === 'assign';
        this.pos = p + 1;
      } else this.pos = save;
    }
    const cmds: Command[] = [];
    for (;;) {
      const cmd = this.command();
      if (cmd.args.length === 0) {
        if (cmds.length === 0 && allowEmpty) break;
        this.err(`missing value for ${context}`);
      }
      cmds.push(cmd);
      if (this.peek()?.t === 'pipe') { this.next(); continue; }
      break;
    }
    return { decl, assign, cmds, line: this.line };
  }

  private command(): Command {
    const args: Arg[] = [];
    for (;;) {
      const t = this.peek();
      if (!t || t.t === 'pipe' || t.t === 'rparen') break;
      if (t.t === 'declare' || t.t === 'assign' || t.t === 'comma') this.err('unexpected assignment or comma in operand');
      args.push(this.operand());
    }
    return { args };
  }

  private operand(): Arg {
    const t = this.next()!;
    let arg: Arg;
    switch (t.t) {
      case 'dot': arg = { type: 'dot' }; break;
      case 'field': arg = { type: 'field', chain: [t.v] }; break;
      case 'var': arg = { type: 'variable', name: t.v, chain: [] }; break;
      case 'string': arg = { type: 'string', value: t.v }; break;
      case 'number': arg = { type: 'number', value: t.v }; break;
      case 'ident':
        if (t.v === 'true' || t.v === 'false') arg = { type: 'bool', value: t.v === 'true' };
        else if (t.v === 'nil') arg = { type: 'nil' };
        else if (KEYWORDS.has(t.v)) this.err(`unexpected keyword "${t.v}" in operand`);
        else arg = { type: 'identifier', name: t.v };
        break;
      case 'lparen': {
        const pipe = this.pipeline('parenthesized pipeline');
        if (this.next()?.t !== 'rparen') this.err('unclosed left paren');
        arg = { type: 'pipe', pipe, chain: [] };
        break;
      }
      default: this.err('unexpected token in operand');
    }
    // Field chains after a variable, a field or a parenthesised pipeline: `$x.a.b`, `(.a).b`.
    for (let f = this.peekChainedField(); f !== undefined; f = this.peekChainedField()) {
      this.pos++;
      if (arg.type === 'field' || arg.type === 'variable' || arg.type === 'pipe') arg.chain.push(f);
      else if (arg.type === 'dot') arg = { type: 'field', chain: [f] };
      else this.err(`unexpected . after term`);
    }
    return arg;
  }
}

/** Parse a template into a node list. Throws TemplateError with a line number. */
export function parseTemplate(src: string): Node[] {
  const parts = split(src);
  let idx = 0;

  type Ending = { kind: 'end' } | { kind: 'else'; rest: ActionParser; line: number } | { kind: 'eof' };

  const parseList = (): { nodes: Node[]; ending: Ending } => {
    const nodes: Node[] = [];
    while (idx < parts.length) {
      const part = parts[idx++]!;
      if (typeof part === 'string') { nodes.push({ type: 'text', text: part }); continue; }
      const body = part.body.trim();
      if (body.startsWith('/*')) {
        if (!body.endsWith('*/')) throw new TemplateError(`line ${part.line}: comment ends before closing delimiter`);
        continue;
      }
      const toks = lex(part.body, part.line);
      if (toks.length === 0) throw new TemplateError(`line ${part.line}: missing value for command`);
      const p = new ActionParser(toks, part.line);
      const keyword = p.takeKeyword();
      switch (keyword) {
        case undefined: {
          const pipe = p.pipeline('command');
          if (!p.done()) throw new TemplateError(`line ${part.line}: unexpected token after pipeline`);
          nodes.push({ type: 'action', pipe });
          break;
        }
        case 'end':
          if (!p.done()) throw new TemplateError(`line ${part.line}: unexpected token after end`);
          return { nodes, ending: { kind: 'end' } };
        case 'else':
          return { nodes, ending: { kind: 'else', rest: p, line: part.line } };
        case 'if': case 'with': case 'range':
          nodes.push(parseControl(keyword, p, part.line));
          break;
        case 'break': case 'continue':
          if (!p.done()) throw new TemplateError(`line ${part.line}: unexpected token after ${keyword}`);
          nodes.push({ type: keyword, line: part.line });
          break;
        default:
          throw new TemplateError(`line ${part.line}: "${keyword}" is not supported by vaultgate's template engine (named templates are not available)`);
      }
    }
    return { nodes, ending: { kind: 'eof' } };
  };

  const parseControl = (kind: 'if' | 'with' | 'range', p: ActionParser, line: number): Node => {
    const pipe = p.pipeline(kind, kind === 'range');
    if (!p.done()) throw new TemplateError(`line ${line}: unexpected token in ${kind}`);
    const body = parseList();
    if (body.ending.kind === 'eof') throw new TemplateError(`line ${line}: unexpected EOF: ${kind} has no matching end`);
    let elseList: Node[] | undefined;
    if (body.ending.kind === 'else') {
      const rest = body.ending.rest;
      if (!rest.done()) {
        // `else if ...` / `else with ...`: sugar for else + a nested control ending at the same end.
        const chained = rest.takeKeyword();
        if ((chained !== 'if' && chained !== 'with') || kind === 'range') throw new TemplateError(`line ${body.ending.line}: unexpected token after else`);
        elseList = [parseControl(chained, rest, body.ending.line)];
      } else {
        const tail = parseList();
        if (tail.ending.kind !== 'end') throw new TemplateError(`line ${line}: ${kind} has no matching end`);
        elseList = tail.nodes;
      }
    }
    return kind === 'range' ? { type: 'range', pipe, list: body.nodes, elseList, line } : { type: kind, pipe, list: body.nodes, elseList, line };
  };

  const { nodes, ending } = parseList();
  if (ending.kind === 'end') throw new TemplateError('unexpected {{end}}');
  if (ending.kind === 'else') throw new TemplateError(`line ${ending.line}: unexpected {{else}}`);
  return nodes;
}

/** Every function name a template calls (for "is this function supported?" checks). */
export function functionsUsed(nodes: Node[]): Set<string> {
  const out = new Set<string>();
  const pipe = (p: Pipe): void => {
    for (const c of p.cmds) for (const a of c.args) {
      if (a.type === 'identifier') out.add(a.name);
      if (a.type === 'pipe') pipe(a.pipe);
    }
  };
  const walk = (ns: Node[]): void => {
    for (const n of ns) {
      if (n.type === 'action') pipe(n.pipe);
      if (n.type === 'if' || n.type === 'with' || n.type === 'range') {
        pipe(n.pipe);
        walk(n.list);
        if (n.elseList) walk(n.elseList);
      }
    }
  };
  walk(nodes);
  return out;
}
