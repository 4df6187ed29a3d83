// Executes parsed templates with Go text/template's semantics as ESO's engine v2 configures it
// (`Option("missingkey=error")`): a missing map key is an error, not "<no value>"; pipes pass the
// previous result as the last argument; `and`/`or` short-circuit (Go ≥ 1.18); truthiness as Go's
// `isTrue`; values print as fmt's %v would.
import { TemplateError, type Arg, type Command, type Node, type Pipe } from './parse.ts';

export type TemplateFunction = (...args: unknown[]) => unknown;

/** Output cap per template: a Secret holds at most 1 MiB anyway; this stops `repeat 1e9` early. */
const MAX_OUTPUT = 1 << 20;
const MAX_RANGE = 100_000;

class BreakSignal extends Error { }
class ContinueSignal extends Error { }

interface State {
  funcs: ReadonlyMap<string, TemplateFunction>;
  vars: Array<{ name: string; value: unknown }>;
  out: string[];
  size: number;
}

export function execute(nodes: Node[], data: unknown, funcs: ReadonlyMap<string, TemplateFunction>): string {
  const st: State = { funcs, vars: [{ name: '$', value: data }], out: [], size: 0 };
  walkList(st, nodes, data);
  return st.out.join('');
}

function emit(st: State, s: string): void {
  st.size += s.length;
  if (st.size > MAX_OUTPUT) throw new TemplateError(`template output exceeds ${MAX_OUTPUT} bytes`);
  st.out.push(s);
}

function walkList(st: State, nodes: Node[], dot: unknown): void {
  for (const n of nodes) walk(st, n, dot);
}

function walk(st: State, node: Node, dot: unknown): void {
  switch (node.type) {
    case 'text': emit(st, node.text); return;
    case 'action': {
      const v = evalPipe(st, node.pipe, dot);
      if (node.pipe.decl.length === 0) emit(st, printValue(v));
      return;
    }
    case 'if': case 'with': {
      const mark = st.vars.length;
      const v = evalPipe(st, node.pipe, dot);
      if (isTrue(v)) walkList(st, node.list, node.type === 'with' ? v : dot);
      else if (node.elseList) walkList(st, node.elseList, dot);
      st.vars.length = mark;
      return;
    }
    case 'range': return walkRange(st, node, dot);
    case 'break': throw new BreakSignal();
    case 'continue': throw new ContinueSignal();
  }
}

function walkRange(st: State, node: Extract<Node, { type: 'range' }>, dot: unknown): void {
  const mark = st.vars.length;
  // The declared variables receive key and element, not the pipeline's value.
  const pipe: Pipe = { ...node.pipe, decl: [] };
  const v = evalPipe(st, pipe, dot);
  const entries: Array<[unknown, unknown]> = [];
  if (Array.isArray(v)) v.forEach((e, i) => entries.push([i, e]));
  else if (isMap(v)) for (const k of Object.keys(v).sort()) entries.push([k, v[k]]);
  else if (typeof v === 'number' && Number.isInteger(v)) {
    if (v > MAX_RANGE) throw new TemplateError(`line ${node.line}: range over ${v} exceeds ${MAX_RANGE} iterations`);
    for (let i = 0; i < v; i++) entries.push([i, i]);
  } else if (v !== null && v !== undefined) throw new TemplateError(`line ${node.line}: range can't iterate over ${printValue(v)}`);
  if (entries.length > MAX_RANGE) throw new TemplateError(`line ${node.line}: range exceeds ${MAX_RANGE} iterations`);
  if (entries.length === 0) {
    if (node.elseList) walkList(st, node.elseList, dot);
    st.vars.length = mark;
    return;
  }
  for (const [key, elem] of entries) {
    const iterMark = st.vars.length;
    const decl = node.pipe.decl;
    if (decl.length === 1) setVar(st, decl[0]!, elem, node.pipe.assign);
    if (decl.length === 2) {
      setVar(st, decl[0]!, key, node.pipe.assign);
      setVar(st, decl[1]!, elem, node.pipe.assign);
    }
    try {
      walkList(st, node.list, elem);
    } catch (e) {
      if (e instanceof BreakSignal) { st.vars.length = iterMark; break; }
      if (!(e instanceof ContinueSignal)) throw e;
    }
    st.vars.length = iterMark;
  }
  st.vars.length = mark;
}

function setVar(st: State, name: string, value: unknown, assign: boolean): void {
  if (assign) {
    for (let i = st.vars.length - 1; i >= 0; i--) {
      if (st.vars[i]!.name === name) { st.vars[i]!.value = value; return; }
    }
    throw new TemplateError(`undefined variable: ${name}`);
  }
  st.vars.push({ name, value });
}

function lookupVar(st: State, name: string): unknown {
  for (let i = st.vars.length - 1; i >= 0; i--) if (st.vars[i]!.name === name) return st.vars[i]!.value;
  throw new TemplateError(`undefined variable: ${name}`);
}

function evalPipe(st: State, pipe: Pipe, dot: unknown): unknown {
  let value: unknown;
  let hasValue = false;
  for (const cmd of pipe.cmds) {
    value = evalCommand(st, cmd, dot, hasValue ? { value } : undefined, pipe.line);
    hasValue = true;
  }
  for (const name of pipe.decl) setVar(st, name, value, pipe.assign);
  return value;
}

function evalCommand(st: State, cmd: Command, dot: unknown, piped: { value: unknown } | undefined, line: number): unknown {
  const [first, ...rest] = cmd.args;
  if (!first) throw new TemplateError(`line ${line}: empty command`);
  if (first.type === 'identifier') return callFunction(st, first.name, rest, dot, piped, line);
  if (rest.length > 0 || piped) {
    throw new TemplateError(`line ${line}: can't give argument to non-function ${describe(first)}`);
  }
  return evalArg(st, first, dot, line);
}

function callFunction(st: State, name: string, argNodes: Arg[], dot: unknown, piped: { value: unknown } | undefined, line: number): unknown {
  // Go's and/or evaluate their arguments lazily and return the deciding value itself.
  if (name === 'and' || name === 'or') {
    const thunks = argNodes.map((a) => () => evalArg(st, a, dot, line));
    if (piped) thunks.push(() => piped.value);
    if (thunks.length === 0) throw new TemplateError(`line ${line}: wrong number of args for ${name}: want at least 1 got 0`);
    let v: unknown;
    for (const t of thunks) {
      v = t();
      if (name === 'and' ? !isTrue(v) : isTrue(v)) return v;
    }
    return v;
  }
  const fn = st.funcs.get(name);
  if (!fn) throw new TemplateError(`line ${line}: function "${name}" not defined or not supported by vaultgate`);
  const args = argNodes.map((a) => evalArg(st, a, dot, line));
  if (piped) args.push(piped.value);
  try {
    return fn(...args);
  } catch (e) {
    if (e instanceof TemplateError) throw new TemplateError(`line ${line}: error calling ${name}: ${e.message}`);
    throw new TemplateError(`line ${line}: error calling ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function evalArg(st: State, arg: Arg, dot: unknown, line: number): unknown {
  switch (arg.type) {
    case 'dot': return dot;
    case 'field': return fieldChain(dot, arg.chain, line);
    case 'variable': return fieldChain(lookupVar(st, arg.name), arg.chain, line);
    case 'string': return arg.value;
    case 'number': return arg.value;
    case 'bool': return arg.value;
    case 'nil': return null;
    case 'pipe': return fieldChain(evalPipe(st, arg.pipe, dot), arg.chain, line);
    case 'identifier': return callFunction(st, arg.name, [], dot, undefined, line);
  }
}

function fieldChain(receiver: unknown, chain: string[], line: number): unknown {
  let v = receiver;
  for (const f of chain) {
    if (isMap(v)) {
      if (!Object.prototype.hasOwnProperty.call(v, f)) throw new TemplateError(`line ${line}: map has no entry for key "${f}"`);
      v = v[f];
    } else if (v === null || v === undefined) {
      throw new TemplateError(`line ${line}: nil pointer evaluating .${f}`);
    } else {
      throw new TemplateError(`line ${line}: can't evaluate field ${f} in type ${goType(v)}`);
    }
  }
  return v;
}

function describe(a: Arg): string {
  switch (a.type) {
    case 'field': return `.${a.chain.join('.')}`;
    case 'variable': return a.name + (a.chain.length ? `.${a.chain.join('.')}` : '');
    case 'string': return JSON.stringify(a.value);
    case 'number': return String(a.value);
    default: return a.type;
  }
}

export function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

/** Go's template isTrue: false, 0, nil and empty strings/slices/maps are false. */
export function isTrue(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (isMap(v)) return Object.keys(v).length > 0;
  return true;
}

export function goType(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  if (isMap(v)) return 'map[string]interface {}';
  return 'interface {}';
}

/** fmt's %v for the values templates handle. */
export function printValue(v: unknown): string {
  if (v === undefined || v === null) return '<no value>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (v instanceof Uint8Array) return `[${[...v].join(' ')}]`;
  if (Array.isArray(v)) return `[${v.map(inner).join(' ')}]`;
  if (isMap(v)) return `map[${Object.keys(v).sort().map((k) => `${k}:${inner(v[k])}`).join(' ')}]`;
  return typeof v === 'bigint' ? v.toString() : typeof v;
}

function inner(v: unknown): string {
  return v === null || v === undefined ? '<nil>' : printValue(v);
}

export function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  return String(n);
}
