// Go's text/template parser (text/template/parse/parse.go and node.go), all of the grammar: text,
// actions, pipelines with declarations (`$x :=`, `$x =`, `$i, $v :=` in range), parenthesised pipelines,
// field chains, if / else if / else, range (with else, break, continue), with (with else with), define,
// template, block, comments, and Go's parse-time checks (undefined variables and functions, break outside
// range, non-executable pipeline stages, multiple definitions). The one thing refused is complex
// constants (`1+2i`): ESO templates have no use for them. Errors are Go's texts, except that a quoted
// token is named by its kind, not quoted: a template may carry literal secret material.
import { TemplateError } from '../errors.ts';
import { fitsInt64, parseGoInt } from '../strconv.ts';
import { isKeywordItem, lexTemplate, type Item, type ItemType } from './lex.ts';

export interface NumberLit {
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  int: number;
  float: number;
  text: string;
}

export type Arg =
  | { type: 'dot'; line: number }
  | { type: 'nil'; line: number }
  | { type: 'bool'; value: boolean; line: number }
  | { type: 'number'; num: NumberLit; line: number }
  | { type: 'string'; value: string; line: number }
  | { type: 'field'; ident: string[]; line: number }
  | { type: 'variable'; ident: string[]; line: number }
  | { type: 'identifier'; name: string; line: number }
  | { type: 'pipe'; pipe: Pipe; line: number }
  | { type: 'chain'; node: Arg; fields: string[]; line: number };

export interface Command {
  args: Arg[];
  line: number;
}
export interface Pipe {
  decl: string[];
  isAssign: boolean;
  cmds: Command[];
  line: number;
}

export type Node =
  | { type: 'text'; text: string }
  | { type: 'action'; pipe: Pipe; line: number }
  | { type: 'if' | 'with'; pipe: Pipe; list: Node[]; elseList?: Node[]; line: number }
  | { type: 'range'; pipe: Pipe; list: Node[]; elseList?: Node[]; line: number }
  | { type: 'template'; name: string; pipe?: Pipe; line: number }
  | { type: 'break' | 'continue'; line: number };

type Ending = { type: 'end'; line: number } | { type: 'else'; line: number };
type ListItem = Node | Ending | { type: 'comment' };

/** A parsed template and the named templates it defines (Go's template set). */
export interface TemplateSet {
  main: string;
  trees: Map<string, Node[]>;
}

const MAX_STACK_DEPTH = 10_000;

class ParseFailure extends TemplateError {}

/** How an item is named in "unexpected X in Y" (Go's item.String(), without quoting literal text). */
function describe(i: Item): string {
  if (i.typ === 'eof') return 'EOF';
  if (i.typ === 'error') return i.val;
  if (isKeywordItem(i.typ)) return `<${i.val}>`;
  if (i.typ === 'string' || i.typ === 'rawString') return 'quoted string';
  if (i.typ === 'charConstant') return 'character constant';
  if (i.typ === 'text') return 'text';
  return JSON.stringify(i.val.length > 10 ? `${i.val.slice(0, 10)}...` : i.val);
}

class Parser {
  private readonly items: Item[];
  private idx = 0;
  private vars: string[] = ['$'];
  private rangeDepth = 0;
  private stackDepth = 0;
  private actionLine = 0;
  private lastLine = 1;

  constructor(
    src: string,
    private readonly hasFunction: (name: string) => boolean,
    private readonly trees: Map<string, Node[]>,
  ) {
    this.items = lexTemplate(src);
  }

  private errorf(msg: string, line = this.lastLine): never {
    throw new ParseFailure(`line ${line}: ${msg}`);
  }
  private next(): Item {
    const it = this.items[Math.min(this.idx, this.items.length - 1)]!;
    if (this.idx < this.items.length) this.idx++;
    this.lastLine = it.line;
    return it;
  }
  private backup(n = 1): void {
    this.idx -= n;
  }
  private peek(): Item {
    return this.items[Math.min(this.idx, this.items.length - 1)]!;
  }
  private nextNonSpace(): Item {
    let t = this.next();
    while (t.typ === 'space') t = this.next();
    return t;
  }
  private peekNonSpace(): Item {
    const save = this.idx;
    const t = this.nextNonSpace();
    this.idx = save;
    return t;
  }
  private expect(typ: ItemType, context: string): Item {
    const t = this.nextNonSpace();
    if (t.typ !== typ) this.unexpected(t, context);
    return t;
  }
  private unexpected(t: Item, context: string): never {
    if (t.typ === 'error') {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== t.line) {
        extra = ` in action started at line ${this.actionLine}`;
        if (t.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(`${t.val}${extra}`, t.line);
    }
    this.errorf(`unexpected ${describe(t)} in ${context}`, t.line);
  }

  /** parse(): the top level, with `define` clauses split off into the template set. */
  parseMain(name: string): Node[] {
    const root: Node[] = [];
    while (this.peek().typ !== 'eof') {
      if (this.peek().typ === 'leftDelim') {
        const save = this.idx;
        this.next();
        if (this.nextNonSpace().typ === 'define') {
          this.parseDefinition();
          continue;
        }
        this.idx = save;
      }
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected {{${n.type}}}`, n.line);
      if (n.type !== 'comment') root.push(n);
    }
    this.add(name, root);
    return root;
  }

  private add(name: string, root: Node[]): void {
    const existing = this.trees.get(name);
    if (existing === undefined || isEmptyTree(existing)) {
      this.trees.set(name, root);
      return;
    }
    if (!isEmptyTree(root)) this.errorf(`template: multiple definition of template ${JSON.stringify(name)}`);
  }

  private withFreshScope<T>(fn: () => T): T {
    const saved = { vars: this.vars, rangeDepth: this.rangeDepth, stackDepth: this.stackDepth };
    this.vars = ['$'];
    this.rangeDepth = 0;
    this.stackDepth = 0;
    try {
      return fn();
    } finally {
      Object.assign(this, saved);
    }
  }

  private parseDefinition(): void {
    const context = 'define clause';
    const nameTok = this.nextNonSpace();
    if (nameTok.typ !== 'string' && nameTok.typ !== 'rawString') this.unexpected(nameTok, context);
    const name = unquote(nameTok, (m) => this.errorf(m, nameTok.line));
    this.expect('rightDelim', context);
    this.withFreshScope(() => {
      const { list, end } = this.itemList();
      if (end.type !== 'end') this.errorf(`unexpected {{${end.type}}} in ${context}`, end.line);
      this.add(name, list);
    });
  }

  private itemList(): { list: Node[]; end: Ending } {
    const list: Node[] = [];
    while (this.peekNonSpace().typ !== 'eof') {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return { list, end: n };
      if (n.type !== 'comment') list.push(n);
    }
    this.errorf('unexpected EOF');
  }

  private textOrAction(): ListItem {
    const t = this.nextNonSpace();
    switch (t.typ) {
      case 'text':
        return { type: 'text', text: t.val };
      case 'leftDelim': {
        this.actionLine = t.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
      case 'comment':
        return { type: 'comment' };
      default:
        this.unexpected(t, 'input');
    }
  }

  private action(): ListItem {
    const t = this.nextNonSpace();
    switch (t.typ) {
      case 'block':
        return this.blockControl();
      case 'break':
      case 'continue': {
        const after = this.nextNonSpace();
        if (after.typ !== 'rightDelim') this.unexpected(after, `{{${t.typ}}}`);
        if (this.rangeDepth === 0) this.errorf(`{{${t.typ}}} outside {{range}}`, t.line);
        return { type: t.typ, line: t.line };
      }
      case 'else': {
        const p = this.peekNonSpace();
        if (p.typ === 'if' || p.typ === 'with') return { type: 'else', line: p.line };
        const r = this.expect('rightDelim', 'else');
        return { type: 'else', line: r.line };
      }
      case 'end': {
        const r = this.expect('rightDelim', 'end');
        return { type: 'end', line: r.line };
      }
      case 'if':
      case 'range':
      case 'with':
        return this.control(t.typ);
      case 'template':
        return this.templateControl();
    }
    this.backup();
    const tok = this.peek();
    return { type: 'action', pipe: this.pipeline('command', 'rightDelim'), line: tok.line };
  }

  private control(context: 'if' | 'range' | 'with'): Node {
    const mark = this.vars.length;
    try {
      const pipe = this.pipeline(context, 'rightDelim');
      if (context === 'range') this.rangeDepth++;
      const body = this.itemList();
      if (context === 'range') this.rangeDepth--;
      let elseList: Node[] | undefined;
      if (body.end.type === 'else') {
        const p = this.peekNonSpace();
        if ((context === 'if' && p.typ === 'if') || (context === 'with' && p.typ === 'with')) {
          this.nextNonSpace();
          elseList = [this.control(context)];
        } else {
          const tail = this.itemList();
          if (tail.end.type !== 'end') this.errorf(`expected end; found {{${tail.end.type}}}`, tail.end.line);
          elseList = tail.list;
        }
      }
      const tail = elseList ? { elseList } : {};
      return context === 'range'
        ? { type: 'range', pipe, list: body.list, ...tail, line: pipe.line }
        : { type: context, pipe, list: body.list, ...tail, line: pipe.line };
    } finally {
      this.vars.length = mark;
    }
  }

  private templateName(t: Item, context: string): string {
    if (t.typ !== 'string' && t.typ !== 'rawString') this.unexpected(t, context);
    return unquote(t, (m) => this.errorf(m, t.line));
  }

  private blockControl(): Node {
    const context = 'block clause';
    const t = this.nextNonSpace();
    const name = this.templateName(t, context);
    const pipe = this.pipeline(context, 'rightDelim');
    this.withFreshScope(() => {
      const { list, end } = this.itemList();
      if (end.type !== 'end') this.errorf(`unexpected {{${end.type}}} in ${context}`, end.line);
      this.add(name, list);
    });
    return { type: 'template', name, pipe, line: t.line };
  }

  private templateControl(): Node {
    const context = 'template clause';
    const t = this.nextNonSpace();
    const name = this.templateName(t, context);
    let pipe: Pipe | undefined;
    if (this.nextNonSpace().typ !== 'rightDelim') {
      this.backup();
      pipe = this.pipeline(context, 'rightDelim');
    }
    return { type: 'template', name, ...(pipe ? { pipe } : {}), line: t.line };
  }

  private pipeline(context: string, end: ItemType): Pipe {
    const first = this.peekNonSpace();
    const pipe: Pipe = { decl: [], isAssign: false, cmds: [], line: first.line };
    // decls:
    for (;;) {
      const v = this.peekNonSpace();
      if (v.typ !== 'variable') break;
      const save = this.idx;
      this.nextNonSpace();
      const afterVar = this.peek();
      const next = this.peekNonSpace();
      if (next.typ === 'assign' || next.typ === 'declare') {
        pipe.isAssign = next.typ === 'assign';
        this.nextNonSpace();
        pipe.decl.push(v.val);
        this.vars.push(v.val);
        break;
      }
      if (next.typ === 'char' && next.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(v.val);
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const p = this.peekNonSpace().typ;
          if (p === 'variable' || p === 'rightDelim' || p === 'rightParen') continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      }
      void afterVar;
      this.idx = save;
      break;
    }
    for (;;) {
      const t = this.nextNonSpace();
      if (t.typ === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      switch (t.typ) {
        case 'bool':
        case 'charConstant':
        case 'complex':
        case 'dot':
        case 'field':
        case 'identifier':
        case 'number':
        case 'nil':
        case 'rawString':
        case 'string':
        case 'variable':
        case 'leftParen':
          this.backup();
          pipe.cmds.push(this.command());
          break;
        default:
          this.unexpected(t, context);
      }
    }
  }

  private checkPipeline(pipe: Pipe, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0]?.type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string')
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
    });
  }

  private command(): Command {
    const cmd: Command = { args: [], line: this.peekNonSpace().line };
    for (;;) {
      this.peekNonSpace();
      const op = this.operand();
      if (op) cmd.args.push(op);
      const t = this.next();
      if (t.typ === 'space') continue;
      if (t.typ === 'rightDelim' || t.typ === 'rightParen') this.backup();
      else if (t.typ !== 'pipe') this.unexpected(t, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  private operand(): Arg | undefined {
    const node = this.term();
    if (!node) return undefined;
    if (this.peek().typ !== 'field') return node;
    const fields: string[] = [];
    while (this.peek().typ === 'field') fields.push(this.next().val.slice(1));
    switch (node.type) {
      case 'field':
        return { type: 'field', ident: [...node.ident, ...fields], line: node.line };
      case 'variable':
        return { type: 'variable', ident: [...node.ident, ...fields], line: node.line };
      case 'bool':
      case 'string':
      case 'number':
      case 'nil':
      case 'dot':
        this.errorf(
          `unexpected . after term ${node.type === 'dot' ? '"."' : node.type === 'nil' ? '"nil"' : node.type === 'bool' ? `"${String(node.value)}"` : `of kind ${node.type}`}`,
        );
      default:
        return { type: 'chain', node, fields, line: node.line };
    }
  }

  private term(): Arg | undefined {
    const t = this.nextNonSpace();
    const line = t.line;
    switch (t.typ) {
      case 'identifier':
        if (!this.hasFunction(t.val)) this.errorf(`function ${JSON.stringify(t.val)} not defined`, line);
        return { type: 'identifier', name: t.val, line };
      case 'dot':
        return { type: 'dot', line };
      case 'nil':
        return { type: 'nil', line };
      case 'variable': {
        const ident = t.val.split('.');
        if (!this.vars.includes(ident[0]!)) this.errorf(`undefined variable ${JSON.stringify(ident[0])}`, line);
        return { type: 'variable', ident, line };
      }
      case 'field':
        return { type: 'field', ident: [t.val.slice(1)], line };
      case 'bool':
        return { type: 'bool', value: t.val === 'true', line };
      case 'charConstant':
      case 'number':
        return { type: 'number', num: parseNumber(t, (m) => this.errorf(m, line)), line };
      case 'complex':
        this.errorf('complex number constants are not supported by vaultgate', line);
      case 'leftParen': {
        if (this.stackDepth >= MAX_STACK_DEPTH) this.errorf('max expression depth exceeded', line);
        this.stackDepth++;
        try {
          return { type: 'pipe', pipe: this.pipeline('parenthesized pipeline', 'rightParen'), line };
        } finally {
          this.stackDepth--;
        }
      }
      case 'string':
      case 'rawString':
        return { type: 'string', value: unquote(t, (m) => this.errorf(m, line)), line };
    }
    this.backup();
    return undefined;
  }
}

/** parse.IsEmptyTree: only whitespace text (and comments). */
export function isEmptyTree(nodes: Node[]): boolean {
  return nodes.every((n) => n.type === 'text' && /^[ \t\n\v\f\r\x85\xa0]*$/.test(n.text));
}

/** strconv.Unquote of a quoted, raw or char literal (Go byte strings in and out). */
function unquote(t: Item, fail: (m: string) => never): string {
  const s = t.val;
  if (t.typ === 'rawString') return s.slice(1, -1).replace(/\r/g, '');
  const body = s.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      if (c === s[0]) fail('invalid syntax');
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = {
      a: '\x07',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
      v: '\v',
      '\\': '\\',
    };
    if (e !== undefined && simple[e] !== undefined) {
      out += simple[e];
      continue;
    }
    if (e === s[0]) {
      out += e;
      continue;
    }
    const hex = (n: number): number => {
      const h = body.slice(i + 1, i + 1 + n);
      if (h.length !== n || !/^[0-9a-fA-F]*$/.test(h)) fail('invalid syntax');
      i += n;
      return parseInt(h, 16);
    };
    if (e === 'x') {
      out += String.fromCharCode(hex(2));
      continue;
    }
    if (e === 'u' || e === 'U') {
      const r = hex(e === 'u' ? 4 : 8);
      if (r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff)) fail('invalid syntax');
      out += Buffer.from(String.fromCodePoint(r), 'utf8').toString('latin1');
      continue;
    }
    if (e !== undefined && /[0-7]/.test(e)) {
      const o = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(o) || parseInt(o, 8) > 255) fail('invalid syntax');
      out += String.fromCharCode(parseInt(o, 8));
      i += 2;
      continue;
    }
    fail('invalid syntax');
  }
  return out;
}

/** newNumber (node.go): what a literal is as int, uint and float. */
function parseNumber(t: Item, fail: (m: string) => never): NumberLit {
  const text = t.val;
  if (t.typ === 'charConstant') {
    const s = unquote(t, fail);
    const cps = [...Buffer.from(s, 'latin1').toString('utf8')];
    if (cps.length !== 1) fail(`malformed character constant: ${text}`);
    const r = cps[0]!.codePointAt(0)!;
    return { isInt: true, isUint: true, isFloat: true, int: r, float: r, text };
  }
  if (text.endsWith('i')) fail('complex number constants are not supported by vaultgate');
  const n: NumberLit = { isInt: false, isUint: false, isFloat: false, int: 0, float: 0, text };
  const asInt = parseGoInt(text);
  if (asInt !== undefined) {
    if (fitsInt64(asInt)) {
      n.isInt = true;
      n.int = Number(asInt);
    }
    if (asInt >= 0n && asInt < 2n ** 64n && !text.startsWith('-') && !text.startsWith('+')) n.isUint = true;
    if (asInt === 0n) n.isUint = true;
  }
  if (n.isInt || n.isUint) {
    n.isFloat = true;
    n.float = Number(asInt);
  } else {
    const f = goParseFloat(text);
    if (f !== undefined) {
      if (!/[.eEpP]/.test(text)) fail(`integer overflow: "${text}"`);
      n.isFloat = true;
      n.float = f;
      if (Number.isInteger(f) && Math.abs(f) < 2 ** 63) {
        n.isInt = true;
        n.int = f;
      }
      if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) n.isUint = true;
    }
  }
  if (!n.isInt && !n.isUint && !n.isFloat) fail(`illegal number syntax: "${text}"`);
  return n;
}

/** strconv.ParseFloat(text, 64)'s syntax: decimal and hex floats, underscores in Go syntax. */
function goParseFloat(text: string): number | undefined {
  const dec = /^[+-]?(?:[0-9](?:_?[0-9])*)?(?:\.(?:[0-9](?:_?[0-9])*)?)?(?:[eE][+-]?[0-9](?:_?[0-9])*)?$/;
  if (dec.test(text) && /[0-9]/.test(text)) {
    const v = Number(text.replace(/_/g, ''));
    return Number.isFinite(v) ? v : undefined; // ParseFloat's range error
  }
  const hex = /^([+-]?)0[xX]_?([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?[0-9_]+)$/.exec(text);
  if (hex) {
    const int = hex[2]!.replace(/_/g, '');
    const frac = (hex[3] ?? '').replace(/_/g, '');
    if (!int && !frac) return undefined;
    const mant = parseInt(int || '0', 16) + (frac ? parseInt(frac, 16) / 16 ** frac.length : 0);
    const v = mant * 2 ** Number(hex[4]!.replace(/_/g, ''));
    return hex[1] === '-' ? -v : v;
  }
  return undefined;
}

/**
 * Parse `src` as the template named `name` (ESO names it after the data key), checking function names
 * with `hasFunction` as Go's parser does against the FuncMap. Throws TemplateError (phase `parse`).
 */
export function parseTemplateSet(src: string, name: string, hasFunction: (fn: string) => boolean): TemplateSet {
  const trees = new Map<string, Node[]>();
  try {
    new Parser(src, hasFunction, trees).parseMain(name);
  } catch (e) {
    if (e instanceof TemplateError) throw new TemplateError(e.message);
    if (e instanceof RangeError) throw new TemplateError('template nesting too deep');
    throw e;
  }
  return { main: name, trees };
}

/** Every function name a template calls (in every named template it defines). */
export function functionsUsed(set: TemplateSet): Set<string> {
  const out = new Set<string>();
  const arg = (a: Arg): void => {
    if (a.type === 'identifier') out.add(a.name);
    if (a.type === 'pipe') pipe(a.pipe);
    if (a.type === 'chain') arg(a.node);
  };
  const pipe = (p: Pipe | undefined): void => {
    for (const c of p?.cmds ?? []) c.args.forEach(arg);
  };
  const walk = (ns: Node[]): void => {
    for (const n of ns) {
      if (n.type === 'action' || n.type === 'template') pipe(n.pipe);
      if (n.type === 'if' || n.type === 'with' || n.type === 'range') {
        pipe(n.pipe);
        walk(n.list);
        if (n.elseList) walk(n.elseList);
      }
    }
  };
  for (const nodes of set.trees.values()) walk(nodes);
  return out;
}
