/**
 * Synonyms of the field: groups of words that name the same thing in questions and in schemas
 * ("revenue" for an `amount` column, "client" for a `customer` table). One data list, written from
 * general business, HR, geography and education vocabulary; no entry names a particular database.
 * Words are stored as stems (see `stem` in `words.ts`), so `clients` and `client` both find the
 * `customer` group.
 *
 * A synonym match is weaker evidence than the word itself ({@link SYNONYM_QUALITY}), and matches
 * only names and comments, never data values.
 */
import { stem } from './words.js';

/**
 * Synonym groups. A word may sit in several groups (`price` is a measure of sales and of cost).
 * Measure groups (money) mark their numeric column words with {@link MEASURE_COLUMNS}.
 */
export const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  // Money coming in.
  [
    'revenue',
    'sales',
    'sale',
    'sell',
    'income',
    'earnings',
    'turnover',
    'proceeds',
    'amount',
    'total',
    'price',
  ],
  // Money going out.
  ['cost', 'expense', 'spend', 'spending', 'expenditure', 'charge', 'fee', 'amount', 'total', 'price'],
  ['profit', 'margin', 'earnings'],
  ['salary', 'wage', 'pay', 'compensation', 'earnings'],
  ['payment', 'transaction', 'charge', 'transfer'],
  ['customer', 'client', 'buyer', 'purchaser', 'consumer', 'patron', 'shopper'],
  ['employee', 'staff', 'worker', 'personnel', 'colleague'],
  ['supplier', 'vendor', 'provider', 'distributor'],
  ['product', 'item', 'article', 'goods', 'merchandise', 'sku'],
  ['order', 'purchase', 'booking'],
  ['quantity', 'qty', 'units', 'volume'],
  ['company', 'firm', 'business', 'organization', 'organisation', 'corporation', 'enterprise'],
  ['shop', 'store', 'outlet', 'retailer', 'branch'],
  ['country', 'nation'],
  ['city', 'town', 'municipality'],
  ['state', 'province', 'region'],
  ['address', 'location', 'street'],
  ['zip', 'postcode', 'postal'],
  ['phone', 'telephone', 'mobile'],
  ['email', 'mail'],
  ['doctor', 'physician', 'clinician'],
  ['teacher', 'instructor', 'lecturer', 'tutor', 'professor'],
  ['student', 'pupil', 'learner'],
  ['category', 'type', 'kind', 'class', 'genre'],
  ['birth', 'born', 'dob'],
  ['vehicle', 'car', 'automobile', 'truck'],
  ['inventory', 'stock'],
  ['rating', 'score', 'stars'],
  ['discount', 'rebate', 'markdown'],
  ['refund', 'return', 'reimbursement'],
  ['delivery', 'shipment', 'dispatch'],
  ['user', 'member', 'account'],
];

/** Quality of a synonym match (a direct match is 1, a derivation 0.7). */
export const SYNONYM_QUALITY = 0.55;

/**
 * Column words that hold a money measure: a measure synonym ("revenue", "spend") matches a numeric
 * column with one of these words only (not a text column called `total_label`).
 */
export const MEASURE_COLUMNS: ReadonlySet<string> = new Set(
  ['amount', 'total', 'price', 'cost', 'fee', 'charge', 'value', 'revenue', 'sales', 'subtotal', 'spend'].map(
    stem,
  ),
);

const byStem = new Map<string, Set<string>>();
for (const group of SYNONYM_GROUPS) {
  const stems = group.map((word) => stem(word));
  for (const s of stems) {
    let set = byStem.get(s);
    if (!set) {
      set = new Set();
      byStem.set(s, set);
    }
    for (const other of stems) if (other !== s) set.add(other);
  }
}

/** Stems that mean the same as `termStem` (empty when none is listed), never `termStem` itself. */
export function synonymsOf(termStem: string): ReadonlySet<string> {
  return byStem.get(termStem) ?? EMPTY;
}

const EMPTY: ReadonlySet<string> = new Set();
