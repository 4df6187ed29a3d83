// How a template function is declared: its Go signature (text/template checks argument count and types
// against it, evalCall) and its body. A body fails the way a Go function does, by returning an error or
// panicking: both become "error calling NAME: ..." (an exec error). Its message must never quote an
// argument: arguments are secret data.
import { TemplateError } from './errors.ts';

/**
 * Go parameter types as text/template's evalArg/validateType see them: `string`, `int`, `float64`,
 * `bool`, `time` (time.Time) take a literal of that kind or a value of that type, never nil; `map`
 * (map[string]interface{}) and `strings` ([]string) take such a value or nil; `any` (interface{}) takes
 * anything; `value` (the reflect.Value of Go's builtins) takes anything, nil included; `uint32` takes an
 * unsigned integer literal only (no template value has that type), truncated to 32 bits as reflect's
 * SetUint does; `*semver.Version` takes such a pointer (Sprig's semver) or nil.
 */
export type GoParam =
  'string' | 'int' | 'uint32' | 'float64' | 'bool' | 'time' | 'map' | 'strings' | 'any' | 'value' | '*semver.Version';

export interface GoFunc {
  params: readonly GoParam[];
  /** The element type of a final `...T` parameter. */
  variadic?: GoParam;
  fn: (...args: never[]) => unknown;
}

/** A Go function's error (or panic), with a text that names no argument value. */
export class FuncError extends TemplateError {}

export const fail = (msg: string): never => {
  throw new FuncError(msg);
};

type ArgOf<P extends GoParam> = P extends 'string'
  ? string
  : P extends 'int' | 'uint32'
    ? number
    : P extends 'bool'
      ? boolean
      : unknown;
type ArgsOf<T extends readonly GoParam[]> = { [K in keyof T]: T[K] extends GoParam ? ArgOf<T[K]> : never };

/** Declare a function with fixed parameters. */
export function fixed<const T extends readonly GoParam[]>(params: T, fn: (...args: ArgsOf<T>) => unknown): GoFunc {
  return { params, fn: fn };
}

/** Declare a function whose last parameter is `...V`. */
export function variadic<const T extends readonly GoParam[], V extends GoParam>(
  params: T,
  rest: V,
  fn: (...args: [...ArgsOf<T>, ...Array<ArgOf<V>>]) => unknown,
): GoFunc {
  return { params, variadic: rest, fn: fn };
}

export type FuncTable = Record<string, GoFunc>;
