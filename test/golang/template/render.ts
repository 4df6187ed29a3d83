// Parse and run a template with Go's builtins (and any extra functions), as tests of golang/ need it.
// and/or are evaluated by exec itself (they short-circuit), so the parser is told they exist.
import { execute } from '../../../golang/template/exec.ts';
import { GO_BUILTINS } from '../../../golang/template/builtins.ts';
import { parseTemplateSet } from '../../../golang/template/parse.ts';
import type { FuncTable } from '../../../golang/func.ts';

export function render(src: string, dot: unknown = null, extra: FuncTable = {}): string {
  const funcs = new Map(Object.entries({ ...GO_BUILTINS, ...extra }));
  return execute(
    parseTemplateSet(src, 't', (f) => funcs.has(f) || f === 'and' || f === 'or'),
    dot,
    funcs,
  );
}
