// Go's semantics as ESO's templates and fields see them: Go values, fmt, time and durations, errors,
// JSON and YAML encoding, encoding/pem, regexp (RE2) and gjson. The one import of this package for code
// outside golang/; text/template is golang/template/index.ts, Sprig golang/sprig/index.ts.
export * from './values.ts';
export * from './func.ts';
export * from './errors.ts';
export * from './fmt.ts';
export * from './time.ts';
export * from './duration.ts';
export * from './json.ts';
export * from './marshal.ts';
export * from './pem.ts';
export * from './base64.ts';
export * from './regexp.ts';
export * from './gjson.ts';
