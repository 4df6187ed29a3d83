// PLACEHOLDER: admission rules for ESO-compatible kinds are registered here.
export {};
