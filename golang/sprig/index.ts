// Sprig's functions as ESO builds them. The one import of this package for code outside golang/: the
// function table, and the per-namespace budget of derivePassword that the render pool keeps.
export { SPRIG_FUNCS } from './functions.ts';
export { allowanceBudget, NamespaceKeyBudgets, withDeriveBudget, type DeriveBudget } from './password.ts';
