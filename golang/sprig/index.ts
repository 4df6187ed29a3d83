// Sprig's functions as ESO builds them. The one import of this package for code outside golang/.
export * from './functions.ts';
export * from './semver.ts';
export * from './password.ts';
export * from './strings.ts';
export * from './cert.ts';
