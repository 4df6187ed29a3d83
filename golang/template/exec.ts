// Go's text/template executor (text/template/exec.go) as ESO's engine v2 configures it
// (`Option("missingkey=error")`): walks the parsed set (parse.ts) over template values
// (golang/values.ts) and checks every call against the function's Go signature (golang/func.ts) as
// evalCall does: argument count, literal kinds, value types. Limits Go does not have, because a Secret
// holds at most 1 MiB and the controller must not hang: output over 1 MiB, more than 1,000,000 loop
// iterations, or nesting deeper than the JS stack allows is an error, never a hang. Work is counted, not
// only nodes: every function call is charged the size of what it reads and what it returns (bytes of a
// string, elements of a list or map), so a loop that copies a growing list (`append`) or doubles a
// string runs out of budget (MAX_WORK) long before it runs out of time or memory, and no value in a
// render may grow past MAX_VALUE_BYTES / MAX_LIST_ITEMS. The controller also renders in a worker with a
// deadline and a heap limit (controller/reconcilers/render-pool.ts): these budgets make the common cases fail fast,
// with a message, instead of at the deadline.
import { formatV } from '../fmt.ts';
import { FuncError, type GoFunc, type GoParam } from '../func.ts';
import { timeMethod } from '../time.ts';
import { TemplateError, TemplateExecError } from '../errors.ts';
import type { Arg, Command, Node, NumberLit, Pipe, TemplateSet } from './parse.ts';
import { GoMap, GoNum, GoStruct, GoTime, float64, goType, isTrue, sliceElem } from '../values.ts';

export const MAX_OUTPUT = 1 << 20;
const MAX_STEPS = 1_000_000;
/** Units of work (bytes or elements read and returned by function calls) one render may spend: ~0.1 s. */
export const MAX_WORK = 16_000_000;
/** The largest string (bytes) any value in a render may be: 4 times the most a Secret can hold. */
export const MAX_VALUE_BYTES = 4 << 20;
/** The most elements a list or map value may have. */
export const MAX_LIST_ITEMS = 1 << 18;
const MAX_TEMPLATE_DEPTH = 1000;

// A wall-clock deadline for the renders under way (withRenderDeadline), checked every 256 steps and after
// every function call: a loop of costly calls stops at its deadline with a message instead of running on.
// The render pool's workers set it a little inside the pool's own deadline (which then only has to kill
// a worker stuck in one long call); in-process renders (rewrite transforms) set a short one.
let deadlineAt = Infinity;
let deadlineText = '';

/** Run `fn` (synchronous renders) with a deadline `ms` from now, reported as `template rendering exceeded ${label}`. */
export function withRenderDeadline<T>(ms: number, label: string, fn: () => T): T {
  const [savedAt, savedText] = [deadlineAt, deadlineText];
  const at = performance.now() + ms;
  if (at < deadlineAt) [deadlineAt, deadlineText] = [at, label];
  try {
    return fn();
  } finally {
    [deadlineAt, deadlineText] = [savedAt, savedText];
  }
}

/** "No value was passed down the pipeline" (Go's missingVal), distinct from nil. */
const MISSING = Symbol('missing');
type Final = unknown;

class BreakSignal extends Error {}
class ContinueSignal extends Error {}

interface Variable {
  name: string;
  value: unknown;
}

class State {
  vars: Variable[];
  out: string[] = [];
  size = 0;
  steps = 0;
  work = 0;
  depth = 0;
  line = 0;
  constructor(
    readonly set: TemplateSet,
    readonly funcs: ReadonlyMap<string, GoFunc>,
    dot: unknown,
  ) {
    this.vars = [{ name: '$', value: dot }];
  }

  errorf(msg: string): never {
    throw new TemplateExecError(`line ${this.line}: ${msg}`);
  }
  emit(s: string): void {
    this.size += s.length;
    if (this.size > MAX_OUTPUT)
      this.errorf(`template output exceeds ${MAX_OUTPUT} bytes (a Secret holds at most 1 MiB)`);
    this.out.push(s);
  }
  step(): void {
    if (++this.steps > MAX_STEPS) this.errorf(`template exceeds ${MAX_STEPS} steps`);
    if ((this.steps & 255) === 0) this.checkDeadline();
  }
  checkDeadline(): void {
    if (deadlineAt !== Infinity && performance.now() > deadlineAt)
      this.errorf(`template rendering exceeded ${deadlineText}`);
  }
  /** Charge `units` of work (see MAX_WORK). */
  charge(units: number): void {
    this.work += units;
    if (this.work > MAX_WORK)
      this.errorf(
        `template exceeds its work budget (${MAX_WORK} bytes or list elements read and produced by function calls)`,
      );
  }
  setVar(name: string, value: unknown): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]!.name === name) {
        this.vars[i]!.value = value;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }
  varValue(name: string): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    this.errorf(`undefined variable: ${name}`);
  }
}

/** Execute the set's main template with `dot` as data. Throws TemplateExecError. */
export function execute(set: TemplateSet, dot: unknown, funcs: ReadonlyMap<string, GoFunc>): string {
  const st = new State(set, funcs, dot);
  const root = set.trees.get(set.main) ?? [];
  try {
    walkList(st, root, dot);
  } catch (e) {
    if (e instanceof TemplateExecError) throw e;
    if (e instanceof BreakSignal || e instanceof ContinueSignal)
      throw new TemplateExecError('break or continue outside range');
    if (e instanceof RangeError) {
      // The stack (deep nesting, a deeply nested value) or a string/array past the engine's maximum.
      throw new TemplateExecError(
        `line ${st.line}: ${/call stack/i.test(e.message) ? 'exceeded maximum template depth' : `a value exceeds the maximum size (${MAX_VALUE_BYTES} bytes)`}`,
      );
    }
    // Our own messages carry no values (see TemplateError); anything else (a bug, a library) is not
    // trusted: its message could quote the data.
    throw new TemplateExecError(e instanceof TemplateError ? e.message : 'template execution failed');
  }
  return st.out.join('');
}

function walkList(st: State, nodes: Node[], dot: unknown): void {
  for (const n of nodes) walk(st, n, dot);
}

function walk(st: State, node: Node, dot: unknown): void {
  st.step();
  switch (node.type) {
    case 'text':
      st.emit(node.text);
      return;
    case 'action': {
      st.line = node.line;
      const v = evalPipeline(st, dot, node.pipe);
      if (node.pipe.decl.length === 0) st.emit(printValue(v));
      return;
    }
    case 'if':
    case 'with': {
      const mark = st.vars.length;
      st.line = node.line;
      const v = evalPipeline(st, dot, node.pipe);
      if (isTrue(v)) walkList(st, node.list, node.type === 'with' ? v : dot);
      else if (node.elseList) walkList(st, node.elseList, dot);
      st.vars.length = mark;
      return;
    }
    case 'range':
      walkRange(st, node, dot);
      return;
    case 'template':
      walkTemplate(st, node, dot);
      return;
    case 'break':
      throw new BreakSignal();
    case 'continue':
      throw new ContinueSignal();
  }
}

function walkRange(st: State, r: Extract<Node, { type: 'range' }>, dot: unknown): void {
  const outer = st.vars.length;
  st.line = r.line;
  const val = evalPipeline(st, dot, r.pipe);
  const mark = st.vars.length;
  const decl = r.pipe.decl;
  const one = (index: unknown, elem: unknown): boolean => {
    st.step();
    if (decl.length > 0) {
      if (r.pipe.isAssign) st.setVar(decl[0]!, decl.length > 1 ? index : elem);
      else st.vars[st.vars.length - 1]!.value = elem;
    }
    if (decl.length > 1) {
      if (r.pipe.isAssign) st.setVar(decl[1]!, elem);
      else st.vars[st.vars.length - 2]!.value = index;
    }
    try {
      walkList(st, r.list, elem);
    } catch (e) {
      if (e instanceof BreakSignal) return false;
      if (!(e instanceof ContinueSignal)) throw e;
    } finally {
      st.vars.length = mark;
    }
    return true;
  };
  let ran = false;
  if (typeof val === 'number' || (val instanceof GoNum && val.kind !== 'float64')) {
    if (decl.length > 1) st.errorf(`can't use ${formatV(val)} to iterate over more than one variable`);
    const n = typeof val === 'number' ? val : val.value;
    for (let i = 0; i < n; i++) {
      ran = true;
      if (!one(null, typeof val === 'number' ? i : new GoNum(val.kind, i))) break;
    }
  } else if (Array.isArray(val) || val instanceof Uint8Array) {
    for (let i = 0; i < val.length; i++) {
      ran = true;
      if (!one(i, val instanceof Uint8Array ? new GoNum('uint8', val[i]!) : (val as unknown[])[i])) break;
    }
  } else if (val instanceof GoMap) {
    for (const k of val.sortedKeys()) {
      ran = true;
      if (!one(k, val.get(k))) break;
    }
  } else if (val !== null && val !== undefined) {
    st.errorf(`range can't iterate over value of type ${goType(val)}`);
  }
  if (!ran && r.elseList) walkList(st, r.elseList, dot);
  st.vars.length = outer;
}

function walkTemplate(st: State, t: Extract<Node, { type: 'template' }>, dot: unknown): void {
  st.line = t.line;
  const tree = st.set.trees.get(t.name);
  if (tree === undefined) st.errorf(`template ${JSON.stringify(t.name)} not defined`);
  if (st.depth >= MAX_TEMPLATE_DEPTH) st.errorf(`exceeded maximum template depth (${MAX_TEMPLATE_DEPTH})`);
  const newDot = t.pipe ? evalPipeline(st, dot, t.pipe) : null;
  const savedVars = st.vars;
  st.vars = [{ name: '$', value: newDot }];
  st.depth++;
  try {
    walkList(st, tree, newDot);
  } finally {
    st.depth--;
    st.vars = savedVars;
  }
}

function evalPipeline(st: State, dot: unknown, pipe: Pipe): unknown {
  let value: Final = MISSING;
  for (const cmd of pipe.cmds) value = evalCommand(st, dot, cmd, value);
  for (const name of pipe.decl) {
    if (pipe.isAssign) st.setVar(name, value);
    else st.vars.push({ name, value });
  }
  return value;
}

function notAFunction(st: State, args: Arg[], final: Final): void {
  if (args.length > 1 || final !== MISSING) st.errorf(`can't give argument to non-function ${describeArg(args[0]!)}`);
}

function evalCommand(st: State, dot: unknown, cmd: Command, final: Final): unknown {
  const first = cmd.args[0]!;
  st.line = cmd.line;
  switch (first.type) {
    case 'field':
      return evalFieldChain(st, dot, dot, first.ident, cmd.args, final);
    case 'chain': {
      if (first.node.type === 'nil') st.errorf('indirection through explicit nil');
      const recv = evalArg(st, dot, 'any', first.node);
      return evalFieldChain(st, dot, recv, first.fields, cmd.args, final);
    }
    case 'identifier':
      return evalFunction(st, dot, first.name, cmd.args, final);
    case 'pipe':
      notAFunction(st, cmd.args, final);
      return evalPipeline(st, dot, first.pipe);
    case 'variable':
      return evalVariable(st, dot, first, cmd.args, final);
  }
  notAFunction(st, cmd.args, final);
  switch (first.type) {
    case 'bool':
      return first.value;
    case 'dot':
      return dot;
    case 'nil':
      return st.errorf('nil is not a command');
    case 'number':
      return idealConstant(st, first.num);
    case 'string':
      return first.value;
  }
}

/** An untyped constant used as a value: float64 if written as one, else int. */
function idealConstant(st: State, n: NumberLit): unknown {
  const text = n.text;
  const isHexInt = text.length > 2 && text[0] === '0' && (text[1] === 'x' || text[1] === 'X') && !/[pP]/.test(text);
  if (n.isFloat && !isHexInt && text[0] !== "'" && /[.eEpP]/.test(text)) return float64(n.float);
  if (n.isInt) return n.int;
  if (n.isUint) st.errorf(`${text} overflows int`);
  return null;
}

function evalVariable(
  st: State,
  dot: unknown,
  v: Extract<Arg, { type: 'variable' }>,
  args: Arg[] | undefined,
  final: Final,
): unknown {
  const value = st.varValue(v.ident[0]!);
  if (v.ident.length === 1) {
    if (args) notAFunction(st, args, final);
    return value;
  }
  return evalFieldChain(st, dot, value, v.ident.slice(1), args, final);
}

function evalFieldChain(
  st: State,
  dot: unknown,
  receiver: unknown,
  ident: string[],
  args: Arg[] | undefined,
  final: Final,
): unknown {
  let r = receiver;
  for (let i = 0; i < ident.length - 1; i++) r = evalField(st, dot, ident[i]!, undefined, MISSING, r);
  return evalField(st, dot, ident[ident.length - 1]!, args, final, r);
}

function evalField(
  st: State,
  dot: unknown,
  name: string,
  args: Arg[] | undefined,
  final: Final,
  receiver: unknown,
): unknown {
  if (receiver === null || receiver === undefined) st.errorf(`nil data; no entry for key ${JSON.stringify(name)}`);
  const hasArgs = (args !== undefined && args.length > 1) || final !== MISSING;
  if (receiver instanceof GoStruct || receiver instanceof GoTime) {
    const m = receiver instanceof GoStruct ? receiver.methods.get(name) : timeMethod(receiver, name);
    if (typeof m === 'function') {
      if (hasArgs)
        st.errorf(
          `wrong number of args for ${name}: want 0 got ${(args?.length ?? 1) - 1 + (final !== MISSING ? 1 : 0)}`,
        );
      return m();
    }
    // A method with parameters: called as a function is (evalCall), its receiver bound.
    if (m) return evalCall(st, dot, m, name, args ?? [], final);
    if (receiver instanceof GoStruct && receiver.fields.has(name)) {
      if (hasArgs) st.errorf(`${name} has arguments but cannot be invoked as function`);
      return receiver.fields.get(name);
    }
  }
  if (receiver instanceof GoMap) {
    if (hasArgs) st.errorf(`${name} is not a method but has arguments`);
    if (!receiver.has(name)) st.errorf(`map has no entry for key ${JSON.stringify(name)}`);
    return receiver.get(name);
  }
  st.errorf(`can't evaluate field ${name} in type ${goType(receiver)}`);
}

function evalFunction(st: State, dot: unknown, name: string, args: Arg[], final: Final): unknown {
  if (name === 'and' || name === 'or') return evalAndOr(st, dot, name, args, final);
  const fn = st.funcs.get(name);
  if (!fn) st.errorf(`${JSON.stringify(name)} is not a defined function`);
  return evalCall(st, dot, fn, name, args, final);
}

/** Go's and/or: arguments evaluated lazily, the deciding value itself returned. */
function evalAndOr(st: State, dot: unknown, name: 'and' | 'or', argNodes: Arg[], final: Final): unknown {
  const args = argNodes.slice(1);
  const numIn = args.length + (final !== MISSING ? 1 : 0);
  if (numIn < 1) st.errorf(`wrong number of args for ${name}: want at least 1 got ${args.length}`);
  let v: unknown = null;
  for (const a of args) {
    v = evalArg(st, dot, 'value', a);
    if (isTrue(v) === (name === 'or')) return v;
  }
  if (final !== MISSING) v = final;
  return v;
}

function evalCall(st: State, dot: unknown, fn: GoFunc, name: string, argNodes: Arg[], final: Final): unknown {
  const args = argNodes.slice(1);
  const numIn = args.length + (final !== MISSING ? 1 : 0);
  const nParams = fn.params.length + (fn.variadic ? 1 : 0);
  let numFixed = args.length;
  if (fn.variadic) {
    numFixed = fn.params.length;
    if (numIn < numFixed)
      st.errorf(`wrong number of args for ${name}: want at least ${fn.params.length} got ${args.length}`);
  } else if (numIn !== nParams) {
    st.errorf(`wrong number of args for ${name}: want ${nParams} got ${numIn}`);
  }
  const argv: unknown[] = [];
  let i = 0;
  for (; i < numFixed && i < args.length; i++) argv.push(evalArg(st, dot, fn.params[i]!, args[i]!));
  if (fn.variadic) for (; i < args.length; i++) argv.push(evalArg(st, dot, fn.variadic, args[i]!));
  if (final !== MISSING) {
    const t = fn.variadic && numIn - 1 >= numFixed ? fn.variadic : (fn.params[numIn - 1] ?? fn.variadic ?? 'any');
    argv.push(validateType(st, final, t));
  }
  const line = st.line;
  let work = 1;
  for (const a of argv) work += sizeOf(a);
  st.charge(work);
  try {
    const result = fn.fn(...(argv as never[]));
    st.checkDeadline();
    const size = sizeOf(result);
    st.charge(size);
    if (typeof result === 'string' || result instanceof Uint8Array) {
      if (size > MAX_VALUE_BYTES)
        st.errorf(`error calling ${name}: the result exceeds ${MAX_VALUE_BYTES} bytes (a Secret holds at most 1 MiB)`);
    } else if (size > MAX_LIST_ITEMS) st.errorf(`error calling ${name}: the result exceeds ${MAX_LIST_ITEMS} elements`);
    return result;
  } catch (e) {
    st.line = line;
    // Only our own FuncError/TemplateError texts (types, positions, Go's words) are kept; an error from
    // a library or a bug gets a fixed text, because its message could quote an argument (secret data).
    if (e instanceof TemplateExecError) throw e;
    if (e instanceof RangeError) throw e;
    const why =
      e instanceof FuncError || e instanceof TemplateError
        ? e.message
        : 'the function failed (details withheld: they could contain secret data)';
    return st.errorf(`error calling ${name}: ${why}`);
  }
}

/** What a value costs to read or make: bytes of a string, elements of a list or map, 1 for anything else. */
function sizeOf(v: unknown): number {
  if (typeof v === 'string' || Array.isArray(v) || v instanceof Uint8Array) return v.length;
  if (v instanceof Map) return v.size;
  return 1;
}

const NILABLE: ReadonlySet<GoParam> = new Set(['any', 'value', 'map', 'strings', '*semver.Version']);

/** validateType: a computed value passed to a parameter of type `t`. */
function validateType(st: State, value: unknown, t: GoParam): unknown {
  if (value === null || value === undefined || value === MISSING) {
    if (NILABLE.has(t)) return null;
    st.errorf(`invalid value; expected ${goParamName(t)}`);
  }
  if (t === 'any' || t === 'value') return value;
  const ok =
    t === 'string'
      ? typeof value === 'string'
      : t === 'int'
        ? typeof value === 'number'
        : t === 'bool'
          ? typeof value === 'boolean'
          : t === 'float64'
            ? value instanceof GoNum && value.kind === 'float64'
            : t === 'time'
              ? value instanceof GoTime
              : t === 'map'
                ? value instanceof GoMap && value.elem === 'interface {}'
                : t === '*semver.Version'
                  ? value instanceof GoStruct && value.typeName === t
                  : t === 'uint32'
                    ? false
                    : Array.isArray(value) && sliceElem(value) === 'string';
  if (!ok) st.errorf(`wrong type for value; expected ${goParamName(t)}; got ${goType(value)}`);
  return value;
}

export function goParamName(t: GoParam): string {
  switch (t) {
    case 'time':
      return 'time.Time';
    case 'map':
      return 'map[string]interface {}';
    case 'strings':
      return '[]string';
    case 'any':
      return 'interface {}';
    case 'value':
      return 'reflect.Value';
    default:
      return t;
  }
}

/** evalArg: an argument node evaluated for a parameter of type `t`. */
function evalArg(st: State, dot: unknown, t: GoParam, n: Arg): unknown {
  switch (n.type) {
    case 'dot':
      return validateType(st, dot, t);
    case 'nil':
      if (NILABLE.has(t)) return null;
      return st.errorf(`cannot assign nil to ${goParamName(t)}`);
    case 'field':
      return validateType(st, evalFieldChain(st, dot, dot, n.ident, [n], MISSING), t);
    case 'variable':
      return validateType(st, evalVariable(st, dot, n, undefined, MISSING), t);
    case 'pipe':
      return validateType(st, evalPipeline(st, dot, n.pipe), t);
    case 'identifier':
      return validateType(st, evalFunction(st, dot, n.name, [n], MISSING), t);
    case 'chain': {
      if (n.node.type === 'nil') st.errorf('indirection through explicit nil');
      return validateType(
        st,
        evalFieldChain(st, dot, evalArg(st, dot, 'any', n.node), n.fields, undefined, MISSING),
        t,
      );
    }
  }
  // A literal: it must be of the parameter's kind (evalBool / evalString / evalInteger / evalFloat).
  switch (t) {
    case 'any':
    case 'value':
      if (n.type === 'number') return idealConstant(st, n.num);
      return n.value;
    case 'bool':
      if (n.type === 'bool') return n.value;
      return st.errorf(`expected bool; found ${describeArg(n)}`);
    case 'string':
      if (n.type === 'string') return n.value;
      return st.errorf(`expected string; found ${describeArg(n)}`);
    case 'int':
      if (n.type === 'number' && n.num.isInt) return n.num.int;
      return st.errorf(`expected integer; found ${describeArg(n)}`);
    case 'uint32':
      // evalUnsignedInteger: reflect's SetUint keeps the low 32 bits.
      if (n.type === 'number' && n.num.isUint)
        return Number((n.num.isInt ? BigInt(n.num.int) : BigInt(Math.trunc(n.num.float))) & 0xffffffffn);
      return st.errorf(`expected unsigned integer; found ${describeArg(n)}`);
    case 'float64':
      if (n.type === 'number' && n.num.isFloat) return float64(n.num.float);
      return st.errorf(`expected float; found ${describeArg(n)}`);
    default:
      return st.errorf(`can't handle ${describeArg(n)} for arg of type ${goParamName(t)}`);
  }
}

/** A node as Go's errors name it, without the text of string literals (they may be secret). */
function describeArg(a: Arg): string {
  switch (a.type) {
    case 'field':
      return `.${a.ident.join('.')}`;
    case 'variable':
      return a.ident.join('.');
    case 'string':
      return 'a quoted string';
    case 'number':
      return a.num.text;
    case 'bool':
      return String(a.value);
    case 'identifier':
      return a.name;
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'pipe':
      return 'a parenthesized pipeline';
    case 'chain':
      return `a field chain .${a.fields.join('.')}`;
  }
}

/** What an action prints: fmt.Fprint of the value, `<no value>` for none. */
export function printValue(v: unknown): string {
  if (v === null || v === undefined || v === MISSING) return '<no value>';
  return formatV(v);
}
