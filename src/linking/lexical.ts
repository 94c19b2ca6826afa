/**
 * Lexical schema linking: question words against table names, column names, comments and value
 * hints, exact, stemmed (plural/singular), split (`snake_case`, `camelCase`), compound
 * (`orderline` ∋ `order`), fuzzy (one typo, prefixes) and through the field's synonym list
 * (`synonyms.ts`: "revenue" finds a numeric `amount`). Rare words count more (IDF over the
 * tables), so a column name that 300 decoy tables share says little and a value that only
 * `customers.segment` holds ("wholesale") says a lot.
 */
import type { IndexedTable } from './schema-index.js';
import { MEASURE_COLUMNS, SYNONYM_QUALITY, synonymsOf } from './synonyms.js';
import {
  compoundMatch,
  isConventionalPrefix,
  learnNamePrefixes,
  matchQuality,
  splitWords,
  stem,
  terms,
} from './words.js';

/** Column types that hold a measure (a money synonym only matches these). */
const NUMERIC_TYPE = /^(numeric|decimal|money|integer|bigint|smallint|real|double|float|int)/i;

/** Where a word was found. */
export type Field = 'table' | 'column' | 'table_comment' | 'column_comment' | 'value';

/** Weight of a match per field (a table-name hit is the strongest evidence). */
export const FIELD_WEIGHTS: Readonly<Record<Field, number>> = {
  table: 3,
  column: 1.5,
  value: 1.6,
  table_comment: 1,
  column_comment: 0.7,
};

/**
 * Words of query phrasing ("total", "number of", "highest") that must not count as a data value
 * on their own: a ticker named "Vanguard Total …" says nothing about "total amount". Multi-word
 * values said verbatim still match.
 */
const QUERY_WORDS: ReadonlySet<string> = new Set(
  (
    'total number count sum average avg mean max maximum min minimum high highest low lowest top most least ' +
    'first last new old distinct different each per rate ratio percent percentage share name date time year ' +
    'month week day today yesterday current previous next value amount record records result data list'
  )
    .split(' ')
    .map(stem),
);

/** Quality of one word matching inside a multi-word value. */
const PARTIAL_VALUE_QUALITY = 0.5;
/** BM25 `b`: how much a table's column count dampens its column evidence. */
const LENGTH_B = 0.3;
/** Quality of a compound (substring) match, e.g. `customer` inside `tblcustomer`. */
const COMPOUND_QUALITY = 0.75;
/** Bonus, in IDF-weighted points, for a multi-word value found verbatim in the question. */
const PHRASE_BONUS = 3;
/** Bonus when every word of a multi-word table name is in the question (`order items`). */
const FULL_NAME_BONUS = 1.5;

interface Posting {
  table: number;
  field: Field;
  column?: string;
  value?: string;
  /** For values: the value has several words. */
  multiWord?: boolean;
}

/** One piece of evidence for a table. */
export interface Evidence {
  field: Field;
  /** The question word (as stemmed) and the schema word it matched. */
  term: string;
  matched: string;
  column?: string;
  value?: string;
  /** Contribution to the score. */
  points: number;
}

/** Lexical score of one table for a question. */
export interface LexicalHit {
  table: number;
  score: number;
  evidence: Evidence[];
  /** Columns that matched, with their points (for column ranking and value display). */
  columns: Map<string, number>;
}

/** A prebuilt lexical index over the indexed tables of one schema. */
export class LexicalIndex {
  private readonly vocabulary = new Map<string, Posting[]>();
  private readonly phrases = new Map<string, Posting[]>();
  private readonly tableCount: number;
  private readonly fullNames: string[][];
  private readonly df = new Map<string, number>();
  private readonly averageColumns: number;
  private readonly candidateCache = new Map<string, [string, Posting[], number, boolean][]>();
  private readonly prefixes: ReadonlySet<string>;

  constructor(readonly tables: readonly IndexedTable[]) {
    this.tableCount = tables.length;
    this.fullNames = tables.map((t) => splitWords(t.table.name).map(stem));
    tables.forEach((indexed, i) => {
      const { table } = indexed;
      for (const word of splitWords(table.name)) this.add(stem(word), { table: i, field: 'table' });
      if (table.comment)
        for (const t of terms(table.comment)) this.add(t, { table: i, field: 'table_comment' });
      for (const column of table.columns) {
        for (const word of splitWords(column.name))
          this.add(stem(word), { table: i, field: 'column', column: column.name });
        if (column.comment)
          for (const t of terms(column.comment))
            this.add(t, { table: i, field: 'column_comment', column: column.name });
      }
      for (const hint of indexed.hints) {
        for (const value of hint.values) {
          const words = splitWords(value);
          if (words.length === 0) continue;
          if (words.length > 1) {
            const key = words.join(' ');
            let list = this.phrases.get(key);
            if (!list) {
              list = [];
              this.phrases.set(key, list);
            }
            list.push({ table: i, field: 'value', column: hint.column, value });
          }
          for (const word of words) {
            if (word.length < 2 || /^\d+$/.test(word)) continue;
            this.add(stem(word), {
              table: i,
              field: 'value',
              column: hint.column,
              value,
              multiWord: words.length > 1,
            });
          }
        }
      }
    });
    for (const [term, postings] of this.vocabulary)
      this.df.set(term, new Set(postings.map((p) => p.table)).size);
    this.prefixes = learnNamePrefixes(
      tables.map((t) => t.table.name),
      (part) => this.vocabulary.has(part) || this.vocabulary.has(stem(part)),
    );
    this.averageColumns =
      tables.reduce((sum, t) => sum + t.table.columns.length, 0) / Math.max(1, tables.length);
  }

  /**
   * BM25-style length normalisation of column evidence (b = 0.3): a match in a 4-column table says
   * more about the table than the same match in a 40-column one.
   */
  private lengthFactor(table: number): number {
    const columns = this.tables[table]!.table.columns.length;
    return 1 / (1 - LENGTH_B + (LENGTH_B * columns) / (this.averageColumns || 1));
  }

  private add(term: string, posting: Posting): void {
    let list = this.vocabulary.get(term);
    if (!list) {
      list = [];
      this.vocabulary.set(term, list);
    }
    const last = list.at(-1);
    if (
      last &&
      last.table === posting.table &&
      last.field === posting.field &&
      last.column === posting.column
    )
      return;
    list.push(posting);
  }

  /** Inverse document frequency of a schema term: ln(1 + N / (tables containing it + 0.5)). */
  idf(term: string): number {
    return Math.log(1 + this.tableCount / ((this.df.get(term) ?? 0) + 0.5));
  }

  /**
   * Scores every table with evidence for `question` (plus `extraText`, e.g. recalled memories, at
   * `extraWeight`), highest first; tables without evidence are left out.
   */
  search(question: string, extraText: readonly string[] = [], extraWeight = 0.5): LexicalHit[] {
    const hits = new Map<number, LexicalHit>();
    const weighted: [string, number][] = [];
    const seen = new Map<string, number>();
    const addTerms = (text: string, weight: number) => {
      const words = splitWords(text);
      const stems = terms(text);
      for (const t of stems) seen.set(t, Math.max(seen.get(t) ?? 0, weight));
      // Compounds of adjacent words: "check ins" → "checkin", "zip code" → "zipcode".
      for (let i = 0; i + 1 < words.length; i += 1) {
        const compound = stem(`${words[i]}${words[i + 1]}`);
        if (compound.length >= 6 && this.vocabulary.has(compound))
          seen.set(compound, Math.max(seen.get(compound) ?? 0, weight));
      }
      for (const phrase of ngrams(words, 2, 6)) this.matchPhrase(phrase, weight, hits);
    };
    addTerms(question, 1);
    for (const text of extraText) addTerms(text, extraWeight);
    for (const [t, w] of seen) weighted.push([t, w]);
    const questionStems = new Set(seen.keys());

    for (const [term, weight] of weighted) {
      // Best match per (table, field, column) for this term.
      const best = new Map<string, { posting: Posting; quality: number; matched: string }>();
      for (const [vocabTerm, postings, quality, synonym] of this.candidates(term)) {
        for (const posting of postings) {
          if (posting.field === 'value' && (vocabTerm !== term || QUERY_WORDS.has(term))) continue;
          // "revenue" → `amount` only for a numeric column (a measure), not `amount_label text`,
          // and never for a table name (`revenue` is not the `price` table).
          if (synonym && MEASURE_COLUMNS.has(vocabTerm)) {
            if (posting.field !== 'column' && posting.field !== 'column_comment') continue;
            const type = this.tables[posting.table]!.table.columns.find(
              (c) => c.name === posting.column,
            )?.type;
            if (!type || !NUMERIC_TYPE.test(type)) continue;
          }
          if (posting.field !== 'value' && /^\d+$/.test(term)) continue; // `2` in "top 2" is not `_v2`
          const key = `${posting.table}\u0000${posting.field}\u0000${posting.column ?? ''}`;
          // One word of a multi-word value ("states" in 'United States') is weaker evidence.
          const q =
            posting.field === 'value' && posting.multiWord ? quality * PARTIAL_VALUE_QUALITY : quality;
          const previous = best.get(key);
          if (!previous || previous.quality < q) best.set(key, { posting, quality: q, matched: vocabTerm });
        }
      }
      // Per table: the strongest field counts fully, further fields add a little.
      const perTable = new Map<number, Evidence[]>();
      const termIdf = this.df.has(term) ? this.idf(term) : Number.POSITIVE_INFINITY;
      for (const { posting, quality, matched } of best.values()) {
        // A fuzzy or compound match is no rarer than the question word itself.
        const idf = Math.min(this.idf(matched), termIdf);
        const shape =
          posting.field === 'table'
            ? this.nameCoverage(posting.table, questionStems)
            : posting.field === 'table_comment'
              ? 1
              : this.lengthFactor(posting.table);
        const points = weight * quality * FIELD_WEIGHTS[posting.field] * idf * shape;
        const list = perTable.get(posting.table) ?? [];
        list.push({
          field: posting.field,
          term,
          matched,
          ...(posting.column ? { column: posting.column } : {}),
          ...(posting.value ? { value: posting.value } : {}),
          points,
        });
        perTable.set(posting.table, list);
      }
      for (const [table, evidence] of perTable) {
        evidence.sort((a, b) => b.points - a.points);
        const hit = this.hitFor(hits, table);
        hit.score += evidence[0]!.points + 0.15 * evidence.slice(1, 4).reduce((sum, e) => sum + e.points, 0);
        hit.evidence.push(...evidence.slice(0, 4));
        for (const e of evidence)
          if (e.column) hit.columns.set(e.column, (hit.columns.get(e.column) ?? 0) + e.points);
      }
    }
    // Multi-word table names fully present in the question.
    this.fullNames.forEach((words, table) => {
      if (words.length > 1 && words.every((w) => questionStems.has(w))) {
        const hit = this.hitFor(hits, table);
        hit.score += FULL_NAME_BONUS * words.length;
        hit.evidence.push({
          field: 'table',
          term: words.join(' '),
          matched: this.tables[table]!.table.name,
          points: FULL_NAME_BONUS,
        });
      }
    });
    return [...hits.values()]
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score || a.table - b.table);
  }

  private hitFor(hits: Map<number, LexicalHit>, table: number): LexicalHit {
    let hit = hits.get(table);
    if (!hit) {
      hit = { table, score: 0, evidence: [], columns: new Map() };
      hits.set(table, hit);
    }
    return hit;
  }

  /** Multi-word values said verbatim ("Customer Service", "New York"). */
  private matchPhrase(phrase: string, weight: number, hits: Map<number, LexicalHit>): void {
    const postings = this.phrases.get(phrase);
    if (!postings) return;
    const tables = new Set(postings.map((p) => p.table)).size;
    const idf = Math.log(1 + this.tableCount / (tables + 0.5));
    for (const posting of postings) {
      const hit = this.hitFor(hits, posting.table);
      const points = weight * PHRASE_BONUS * idf;
      hit.score += points;
      hit.evidence.push({
        field: 'value',
        term: phrase,
        matched: phrase,
        column: posting.column,
        value: posting.value,
        points,
      });
      if (posting.column) hit.columns.set(posting.column, (hit.columns.get(posting.column) ?? 0) + points);
    }
  }

  /**
   * Share of a table name's words that the question mentions, mapped to [0.5, 1]: `category` for
   * "each category" is 1, `qa_category_map` is 0.67. Words of ≤ 2 letters (prefixes such as `tb`) do not count.
   */
  private nameCoverage(table: number, questionStems: ReadonlySet<string>): number {
    const words = this.fullNames[table]!.filter((w) => w.length > 2);
    if (words.length <= 1) return 1;
    const hits = words.filter(
      (w) => questionStems.has(w) || [...questionStems].some((q) => matchQuality(q, w) > 0),
    ).length;
    return 0.5 + (0.5 * Math.max(1, hits)) / words.length;
  }

  /**
   * Vocabulary terms matching `term` with their quality and whether the match is a synonym:
   * itself (1), derivations and typos (`matchQuality`), compounds containing it (`orderline` for
   * `order`), and synonyms of the field ({@link SYNONYM_QUALITY}). Cached per term.
   */
  private candidates(term: string): [string, Posting[], number, boolean][] {
    const cached = this.candidateCache.get(term);
    if (cached) return cached;
    const out: [string, Posting[], number, boolean][] = [];
    const exact = this.vocabulary.get(term);
    if (exact) out.push([term, exact, 1, false]);
    // Synonyms of the field, for content words only ("total" in "total number" expands to nothing).
    if (!QUERY_WORDS.has(term)) {
      for (const synonym of synonymsOf(term)) {
        const postings = this.vocabulary.get(synonym);
        if (postings) out.push([synonym, postings, SYNONYM_QUALITY, true]);
      }
    }
    if (term.length >= 4 && !/\d/.test(term)) {
      const isPart = (part: string) => this.vocabulary.has(part) || this.vocabulary.has(stem(part));
      const isPrefix = (piece: string) => isConventionalPrefix(piece) || this.prefixes.has(piece);
      for (const [vocabTerm, postings] of this.vocabulary) {
        if (vocabTerm === term) continue;
        const lengthGap = vocabTerm.length - term.length;
        let quality = 0;
        if (Math.abs(lengthGap) <= 1 || vocabTerm.startsWith(term) || term.startsWith(vocabTerm))
          quality = matchQuality(term, vocabTerm);
        if (quality === 0 && lengthGap >= 2 && compoundMatch(vocabTerm, term, isPart, isPrefix))
          quality = COMPOUND_QUALITY;
        if (quality > 0 && !out.some(([t, , q]) => t === vocabTerm && q >= quality))
          out.push([vocabTerm, postings, quality, false]);
      }
    }
    if (this.candidateCache.size > 5000) this.candidateCache.clear();
    this.candidateCache.set(term, out);
    return out;
  }
}

/** Space-joined n-grams of `words` for n in [min, max]. */
function ngrams(words: readonly string[], min: number, max: number): string[] {
  const out: string[] = [];
  for (let n = min; n <= max; n += 1) {
    for (let i = 0; i + n <= words.length; i += 1) out.push(words.slice(i, i + n).join(' '));
  }
  return out;
}
