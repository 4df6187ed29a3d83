// Render a template with Sprig's functions as ESO builds them (tests of golang/sprig/).
import { SPRIG_FUNCS } from '../../../golang/sprig/functions.ts';
import { render } from '../template/render.ts';

export const sprig = (src: string, dot: unknown = null): string => render(src, dot, SPRIG_FUNCS);
