/**
 * The prompt's token budget: the model's context window (`num_ctx`) minus the answer reserve,
 * shared by the prompt's sections in priority order (schema, memories, examples, conversation).
 * Counts are the calibrated estimate of `src/models/tokens.ts`.
 */
import { estimateTokens } from '../core/tokens.js';

/**
 * Window assumed when `num_ctx` is automatic and the model reports a larger trained context: the
 * chat adapter sizes `num_ctx` to the prompt, and on a local CPU/GPU every extra thousand tokens of
 * window costs memory and prompt time, so the planner aims for prompts that fit 8,192.
 */
export const AUTO_CONTEXT_CAP_TOKENS = 8192;

/** Window assumed when nothing is known (Ollama's historical default). */
export const FALLBACK_CONTEXT_TOKENS = 4096;

/** Tokens kept free for the chat template and the estimate's error (as the chat adapter's margin). */
export const TEMPLATE_MARGIN_TOKENS = 256;

/**
 * The context window the prompt must fit: a fixed `num_ctx` when configured (capped by the model's
 * trained length when known); otherwise the model's trained length from `/api/show`, capped at
 * {@link AUTO_CONTEXT_CAP_TOKENS}; {@link FALLBACK_CONTEXT_TOKENS} when neither is known.
 */
export function resolveContextTokens(
  numCtx: number | undefined,
  modelContextLength: number | undefined,
): number {
  if (numCtx && numCtx > 0) return modelContextLength ? Math.min(numCtx, modelContextLength) : numCtx;
  if (modelContextLength && modelContextLength > 0)
    return Math.min(modelContextLength, AUTO_CONTEXT_CAP_TOKENS);
  return FALLBACK_CONTEXT_TOKENS;
}

/** One part of a prompt competing for the budget. */
export interface BudgetSection {
  name: string;
  /** Items in their own priority order (e.g. memories by relevance, turns newest first). */
  items: readonly string[];
}

/** What fitted. */
export interface BudgetFit {
  /** Per section, the items kept (a prefix of its items, in order). */
  kept: Map<string, string[]>;
  /** Per section, the estimated tokens of the kept items. */
  tokens: Map<string, number>;
  /** Items left out, per section. */
  dropped: Map<string, number>;
  /** Tokens left unused. */
  remainingTokens: number;
}

/**
 * Fits sections into `budgetTokens` in priority order: the first section takes as many of its
 * items as fit, then the next, and so on; an item that does not fit is skipped and later (smaller)
 * items of the same section may still fit. Never throws; an empty budget keeps nothing.
 * Each item costs its estimated tokens plus one for the separating newline.
 */
export function fitSections(budgetTokens: number, sections: readonly BudgetSection[]): BudgetFit {
  let remaining = Math.max(0, Math.floor(budgetTokens));
  const kept = new Map<string, string[]>();
  const tokens = new Map<string, number>();
  const dropped = new Map<string, number>();
  for (const section of sections) {
    const list: string[] = [];
    let used = 0;
    let skipped = 0;
    for (const item of section.items) {
      const cost = estimateTokens(item) + 1;
      if (cost <= remaining) {
        list.push(item);
        used += cost;
        remaining -= cost;
      } else {
        skipped += 1;
      }
    }
    kept.set(section.name, list);
    tokens.set(section.name, used);
    dropped.set(section.name, skipped);
  }
  return { kept, tokens, dropped, remainingTokens: remaining };
}

/** Inputs of {@link schemaBudget}. */
export interface SchemaBudgetInput {
  /** The window (see {@link resolveContextTokens}). */
  contextTokens: number;
  /** Tokens reserved for the model's reply (`num_predict`, e.g. 1024 for SQL). */
  answerReserveTokens: number;
  /** Tokens of the prompt without the schema (system rules, question, date). */
  promptOverheadTokens: number;
  /** Tokens the caller wants for lower-priority sections (memories, examples, conversation). */
  reservedTokens?: number;
}

/**
 * Tokens the schema part may use: the window minus reply, template margin, the rest of the prompt
 * and the lower-priority reservations; the schema has priority, so reservations can take at most
 * half of what is left. At least 0.
 */
export function schemaBudget(input: SchemaBudgetInput): { availableTokens: number; schemaTokens: number } {
  const available = Math.max(
    0,
    input.contextTokens - input.answerReserveTokens - TEMPLATE_MARGIN_TOKENS - input.promptOverheadTokens,
  );
  const reserved = Math.min(Math.max(0, input.reservedTokens ?? 0), Math.floor(available / 2));
  return { availableTokens: available, schemaTokens: available - reserved };
}
