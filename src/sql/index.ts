export { checkAllowlist, isAllowed, parseTablePatterns, type TablePattern } from './allowlist.js';
export { type ExtractResult, extractSql } from './extract.js';
export { type GuardOptions, type GuardVerdict, guardSql, guardSqlSync, loadGuardParser } from './guard.js';
export { GUARD_RULES, type GuardRule, type ReadKind } from './guard-rules.js';
export {
  checkIdentifiers,
  closest,
  formatUnknownIdentifiers,
  type IdentifierCheck,
  type UnknownIdentifier,
} from './identifiers.js';
export { lexSql, type SqlToken, splitStatements } from './lexer.js';
