// Go's semantics as ESO's templates and fields see them: Go values, fmt, time and durations, errors,
// JSON and YAML encoding, encoding/pem and base64, regexp (RE2) and gjson. The one import of this package
// for code outside golang/; text/template is golang/template/index.ts, Sprig golang/sprig/index.ts.
export { GoMap, fromJsValue, goString, goStringBytes, goStringMap, isMap, utf8Text } from './values.ts';
export { fail, fixed, variadic, type FuncTable, type GoFunc, type GoParam } from './func.ts';
export { TemplateError, TemplateExecError } from './errors.ts';
export {
  formatGoDuration,
  parseGoDuration,
  parseGoDurationNs,
  type DurationNsResult,
  type DurationResult,
} from './duration.ts';
export { goJson } from './json.ts';
export { toGoYaml } from './marshal.ts';
export { pemDecode, pemEncode, type PemBlock } from './pem.ts';
export {
  compileGoRegexp,
  GoRegexpError,
  parseGoRegexp,
  quoteMeta,
  replaceAllGo,
  type GoRegexp,
  type GoRegexpResult,
} from './regexp.ts';
export { gjsonGet, type GjsonResult } from './gjson.ts';
