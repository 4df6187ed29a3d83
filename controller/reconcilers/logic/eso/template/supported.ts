// The template functions the controller runs: exactly the list admission allows
// (webhook/rules/eso/template-subset.ts), so a template accepted by the webhook renders here and one it
// refuses is refused here too (ALL_FUNCTIONS implements more, kept for when the subset grows).
export { SUPPORTED_TEMPLATE_FUNCTIONS } from '../../../../../webhook/rules/eso/template-subset.ts';
