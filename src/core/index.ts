export * from './errors.js';
export * from './json.js';
export * from './memory.js';
export * from './ports.js';
export * from './redact.js';
export * from './schema.js';
export * from './steps.js';
export * from './tokens.js';
