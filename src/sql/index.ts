export { type ExtractResult, extractSql } from './extract.js';
export { type GuardVerdict, guardSql, loadGuardParser } from './guard.js';
export { GUARD_RULES, type GuardRule, type ReadKind } from './guard-rules.js';
export { lexSql, type SqlToken, splitStatements } from './lexer.js';
