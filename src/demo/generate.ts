/**
 * The deterministic demo shop: customers, products, orders and order items generated from a seed
 * by our own PRNG ({@link createRandom}), so every install gets the same rows and the same answers.
 * Money is computed in integer cents and emitted as decimal strings (`'1234.50'`), exactly as
 * PostgreSQL prints `numeric(…, 2)`.
 */
import { BRAND_MARKUP_PERCENT, CATEGORIES, COUNTRIES, type CountrySpec, PAYMENT_METHODS } from './catalog.js';
import { createRandom, createWeightedSampler, type Random } from './random.js';

/** Seed used by `sqlrecall demo`. */
export const DEFAULT_DEMO_SEED = 20240101;
/** Number of customers generated. */
export const DEMO_CUSTOMER_COUNT = 2400;
/** Number of orders generated. */
export const DEMO_ORDER_COUNT = 24000;
/**
 * First order date (inclusive, ISO) of the reference range {@link generateDemoData} uses when no
 * range is given (tests, reproducible fixtures). The demo database itself uses {@link demoRange}
 * of its creation day.
 */
export const DEMO_FIRST_DAY = '2024-01-01';
/** Last order date (inclusive, ISO) of the reference range; also its notional "today" for order statuses. */
export const DEMO_LAST_DAY = '2025-12-31';
/** Days of order history in a demo made by {@link demoRange}: two years. */
export const DEMO_HISTORY_DAYS = 730;

/** The order dates of a demo: `firstDay` … `lastDay`, inclusive, as `YYYY-MM-DD` (UTC days). */
export interface DemoRange {
  firstDay: string;
  lastDay: string;
}

/**
 * The range of a demo created on `creationDay` (its UTC date): the last {@link DEMO_HISTORY_DAYS}
 * days up to yesterday, so "orders last month" finds orders. The same day always gives the same
 * range, and with the same seed the same rows.
 * @throws RangeError when `creationDay` is not a valid date.
 */
export function demoRange(creationDay: Date): DemoRange {
  const today = Date.parse(`${creationDay.toISOString().slice(0, 10)}T00:00:00Z`);
  const last = today - DAY_MS;
  const first = last - (DEMO_HISTORY_DAYS - 1) * DAY_MS;
  return {
    firstDay: new Date(first).toISOString().slice(0, 10),
    lastDay: new Date(last).toISOString().slice(0, 10),
  };
}

/** `customer_segment` enum values. */
export const CUSTOMER_SEGMENTS = ['retail', 'wholesale'] as const;
/** `order_status` enum values, in lifecycle order. */
export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled', 'returned'] as const;

/** A `customer_segment` enum value. */
export type CustomerSegment = (typeof CUSTOMER_SEGMENTS)[number];
/** An `order_status` enum value. */
export type OrderStatus = (typeof ORDER_STATUSES)[number];
/** A value of the `orders.payment_method` text column (checked by a CHECK constraint). */
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** A `customers` row. */
export interface DemoCustomer {
  id: number;
  name: string;
  email: string;
  city: string;
  country: string;
  segment: CustomerSegment;
}

/** A `products` row; `price` is a decimal string with two digits. */
export interface DemoProduct {
  id: number;
  name: string;
  category: string;
  price: string;
}

/** An `orders` row; `orderDate` is `YYYY-MM-DD`, `totalAmount` the exact sum of its items. */
export interface DemoOrder {
  id: number;
  customerId: number;
  orderDate: string;
  status: OrderStatus;
  paymentMethod: PaymentMethod;
  totalAmount: string;
}

/** An `order_items` row; `unitPrice` is a decimal string (list price minus any discount). */
export interface DemoOrderItem {
  orderId: number;
  productId: number;
  quantity: number;
  unitPrice: string;
}

/** All rows of the demo shop, each table ordered by its primary key. */
export interface DemoData {
  customers: DemoCustomer[];
  products: DemoProduct[];
  orders: DemoOrder[];
  orderItems: DemoOrderItem[];
}

const DAY_MS = 86_400_000;
// Relative order volume per month (Jan..Dec): a quiet January, festive-season peak in Nov/Dec.
const MONTH_FACTOR = [85, 85, 95, 95, 100, 100, 105, 100, 100, 115, 150, 165];

/** Formats integer cents as a decimal string: 123456 → '1234.56'. */
export function centsToDecimal(cents: number): string {
  const whole = Math.floor(cents / 100);
  const rest = cents - whole * 100;
  return `${whole}.${rest < 10 ? '0' : ''}${rest}`;
}

function toAsciiLower(text: string): string {
  return text
    .replace(/ß/g, 'ss')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

function generateCustomers(random: Random): DemoCustomer[] {
  const countryWeights = COUNTRIES.map((c) => c.weight);
  const usedEmails = new Set<string>();
  const domains = ['example.com', 'example.net', 'example.org', 'mail.example.com'];
  const customers: DemoCustomer[] = [];
  for (let id = 1; id <= DEMO_CUSTOMER_COUNT; id += 1) {
    const country: CountrySpec = random.weighted(COUNTRIES, countryWeights);
    // Zipf-like city skew: the first (largest) city gets the most customers.
    const city = random.weighted(
      country.cities,
      country.cities.map((_, i) => 1 / (i + 1.5)),
    );
    const first = random.pick(country.firstNames);
    const last = random.pick(country.lastNames);
    const base = random.chance(0.6)
      ? `${toAsciiLower(first)}.${toAsciiLower(last)}`
      : `${toAsciiLower(first)}${toAsciiLower(last)}${random.int(1, 99)}`;
    const domain = random.pick(domains);
    let email = `${base}@${domain}`;
    for (let n = 2; usedEmails.has(email); n += 1) email = `${base}${n}@${domain}`;
    usedEmails.add(email);
    const segment: CustomerSegment = random.chance(0.1) ? 'wholesale' : 'retail';
    customers.push({ id, name: `${first} ${last}`, email, city, country: country.name, segment });
  }
  return customers;
}

interface ProductInternal extends DemoProduct {
  priceCents: number;
  categoryIndex: number;
}

function generateProducts(random: Random): ProductInternal[] {
  const products: ProductInternal[] = [];
  CATEGORIES.forEach((category, categoryIndex) => {
    const combos: [number, number][] = [];
    category.brands.forEach((_, b) => {
      category.items.forEach((_, i) => {
        combos.push([b, i]);
      });
    });
    const chosen = random
      .shuffle(combos)
      .slice(0, 20)
      .sort((x, y) => x[1] - y[1] || x[0] - y[0]);
    for (const [b, i] of chosen) {
      const [itemName, basePrice] = category.items[i] as readonly [string, number];
      const markup = BRAND_MARKUP_PERCENT[b] ?? 100;
      // Jitter ±6 %, then end the price on .99 (or .49 for cheap items): e.g. 1299.99, 14.49.
      const raw = Math.round((basePrice * markup * random.int(94, 106)) / 10000);
      const whole = Math.max(1, raw);
      const priceCents = whole < 20 && random.chance(0.5) ? whole * 100 - 51 : whole * 100 - 1;
      products.push({
        id: products.length + 1,
        name: `${category.brands[b]} ${itemName}`,
        category: category.name,
        price: centsToDecimal(priceCents),
        priceCents,
        categoryIndex,
      });
    }
  });
  return products;
}

function isoDay(firstDay: string, dayIndex: number): string {
  return new Date(Date.parse(`${firstDay}T00:00:00Z`) + dayIndex * DAY_MS).toISOString().slice(0, 10);
}

function dayWeights(firstDay: string, dayCount: number): number[] {
  const weights: number[] = [];
  const start = Date.parse(`${firstDay}T00:00:00Z`);
  for (let d = 0; d < dayCount; d += 1) {
    const date = new Date(start + d * DAY_MS);
    const weekend = date.getUTCDay() === 0 || date.getUTCDay() === 6 ? 1.15 : 1;
    // Business grows ~35 % over the range (two years).
    const growth = 1 + (0.35 * d) / dayCount;
    weights.push((MONTH_FACTOR[date.getUTCMonth()] as number) * weekend * growth);
  }
  return weights;
}

function pickStatus(random: Random, ageDays: number): OrderStatus {
  if (ageDays <= 2) return random.weighted(ORDER_STATUSES, [50, 40, 0, 0, 10, 0]);
  if (ageDays <= 7) return random.weighted(ORDER_STATUSES, [8, 22, 60, 5, 5, 0]);
  if (ageDays <= 21) return random.weighted(ORDER_STATUSES, [0, 2, 25, 65, 5, 3]);
  return random.weighted(ORDER_STATUSES, [0, 0, 0, 87, 7, 6]);
}

function pickPayment(random: Random, customer: DemoCustomer): PaymentMethod {
  const country = COUNTRIES.find((c) => c.name === customer.country) as CountrySpec;
  if (customer.segment === 'wholesale') {
    return random.weighted(PAYMENT_METHODS, [30, country.payments[1] > 0 ? 15 : 0, 55, 0, 0]);
  }
  return random.weighted(PAYMENT_METHODS, country.payments);
}

const RETAIL_QUANTITIES = [1, 2, 3, 4, 5];
const RETAIL_QUANTITY_WEIGHTS = [72, 18, 6, 2, 2];
const WHOLESALE_QUANTITIES = [5, 10, 12, 20, 24, 25, 30, 40, 50, 100];
const WHOLESALE_QUANTITY_WEIGHTS = [20, 20, 10, 15, 8, 8, 7, 5, 4, 3];
const LINE_COUNTS = [1, 2, 3, 4, 5, 6];
const RETAIL_LINE_WEIGHTS = [38, 27, 16, 10, 6, 3];
const WHOLESALE_LINE_WEIGHTS = [20, 25, 22, 15, 10, 8];

/** Orders generated (and loaded) per batch: 2,000, so at most that many orders and their items are held at once. */
export const DEMO_BATCH_ORDERS = 2000;

/** Number of order batches {@link generateDemoShop} yields: 12. */
export const DEMO_ORDER_BATCHES = Math.ceil(DEMO_ORDER_COUNT / DEMO_BATCH_ORDERS);

/** A batch of orders (ascending ids) with their items. */
export interface DemoOrderBatch {
  orders: DemoOrder[];
  orderItems: DemoOrderItem[];
}

/** The demo shop as {@link generateDemoShop} produces it: the small tables, then the orders batch by batch. */
export interface DemoShop {
  customers: DemoCustomer[];
  products: DemoProduct[];
  /** {@link DEMO_ORDER_BATCHES} batches; iterate once, in order (they share the generator's random state). */
  orderBatches: Iterable<DemoOrderBatch>;
}

/**
 * Generates the demo shop: customers and products at once, the orders (with their items) in
 * batches of {@link DEMO_BATCH_ORDERS}, so a loader holds one batch at a time. Pure: no I/O, no
 * clock, no Math.random; the same seed and range always yield identical rows, however they are batched.
 * @param seed PRNG seed; default {@link DEFAULT_DEMO_SEED}.
 * @param range Order dates; default the reference range {@link DEMO_FIRST_DAY} … {@link DEMO_LAST_DAY}
 *   (the demo database passes {@link demoRange} of its creation day).
 */
export function generateDemoShop(
  seed: number = DEFAULT_DEMO_SEED,
  range: DemoRange = { firstDay: DEMO_FIRST_DAY, lastDay: DEMO_LAST_DAY },
): DemoShop {
  const random = createRandom(seed);
  const customers = generateCustomers(random);
  const products = generateProducts(random);

  // Pareto-like buying: customers get a random rank, weight ~ 1/(rank + 25) plus a floor, so a
  // few heavy buyers place a large share of orders and some customers never order at all.
  const ranks = random.shuffle(customers.map((_, i) => i));
  const customerWeights: number[] = new Array(customers.length).fill(0);
  ranks.forEach((customerIndex, rank) => {
    const segmentBoost = customers[customerIndex]?.segment === 'wholesale' ? 1.5 : 1;
    customerWeights[customerIndex] = (1 / (rank + 25) + 1 / 4000) * segmentBoost;
  });
  const sampleCustomer = createWeightedSampler(customerWeights);

  const dayCount = Math.round((Date.parse(range.lastDay) - Date.parse(range.firstDay)) / DAY_MS) + 1;
  const sampleDay = createWeightedSampler(dayWeights(range.firstDay, dayCount));
  const days = Array.from({ length: DEMO_ORDER_COUNT }, () => sampleDay(random)).sort((a, b) => a - b);

  // Within a category, a fixed random popularity rank, damped by price (cheap items sell more).
  const byCategory = CATEGORIES.map((_, c) => products.filter((p) => p.categoryIndex === c));
  const productSamplers = byCategory.map((list) => {
    const order = random.shuffle(list.map((_, i) => i));
    const weights: number[] = new Array(list.length).fill(0);
    order.forEach((i, rank) => {
      weights[i] = (1 / (rank + 3)) * (1000 / ((list[i]?.priceCents ?? 0) / 100 + 200));
    });
    return createWeightedSampler(weights);
  });
  const categoryIndexes = CATEGORIES.map((_, i) => i);
  const categoryWeights = CATEGORIES.map((c) => c.popularity);
  // Each wholesale customer trades mostly in two favourite categories.
  const favourites = new Map<number, number[]>();
  for (const c of customers) {
    if (c.segment === 'wholesale') favourites.set(c.id, random.shuffle(categoryIndexes).slice(0, 2));
  }

  function* orderBatches(): Generator<DemoOrderBatch> {
    let orders: DemoOrder[] = [];
    let orderItems: DemoOrderItem[] = [];
    for (let index = 0; index < days.length; index += 1) {
      const day = days[index] as number;
      const orderId = index + 1;
      const customer = customers[sampleCustomer(random)] as DemoCustomer;
      const wholesale = customer.segment === 'wholesale';
      const month = Number(isoDay(range.firstDay, day).slice(5, 7));
      const dayOfMonth = Number(isoDay(range.firstDay, day).slice(8, 10));
      const saleDay = month === 11 && dayOfMonth >= 20;
      const lineCount = random.weighted(
        LINE_COUNTS,
        wholesale ? WHOLESALE_LINE_WEIGHTS : RETAIL_LINE_WEIGHTS,
      );
      const seen = new Set<number>();
      const lines: DemoOrderItem[] = [];
      let totalCents = 0;
      for (let line = 0; line < lineCount; line += 1) {
        const fav = favourites.get(customer.id);
        const categoryIndex =
          fav && random.chance(0.7) ? random.pick(fav) : random.weighted(categoryIndexes, categoryWeights);
        const list = byCategory[categoryIndex] as ProductInternal[];
        const product = list[
          (productSamplers[categoryIndex] as (r: Random) => number)(random)
        ] as ProductInternal;
        if (seen.has(product.id)) continue; // (order_id, product_id) is the primary key
        seen.add(product.id);
        let quantity: number;
        let discountPercent = 0;
        if (wholesale) {
          quantity = random.weighted(WHOLESALE_QUANTITIES, WHOLESALE_QUANTITY_WEIGHTS);
          if (product.priceCents > 100_000) quantity = Math.max(2, Math.round(quantity / 5));
          discountPercent = quantity >= 20 ? 12 : quantity >= 10 ? 8 : 5;
        } else {
          quantity = random.weighted(RETAIL_QUANTITIES, RETAIL_QUANTITY_WEIGHTS);
          if (product.priceCents > 50_000) quantity = 1;
          if (saleDay && random.chance(0.5)) discountPercent = 15;
        }
        const unitCents = Math.round((product.priceCents * (100 - discountPercent)) / 100);
        totalCents += unitCents * quantity;
        lines.push({ orderId, productId: product.id, quantity, unitPrice: centsToDecimal(unitCents) });
      }
      lines.sort((a, b) => a.productId - b.productId);
      orderItems.push(...lines);
      orders.push({
        id: orderId,
        customerId: customer.id,
        orderDate: isoDay(range.firstDay, day),
        status: pickStatus(random, dayCount - 1 - day),
        paymentMethod: pickPayment(random, customer),
        totalAmount: centsToDecimal(totalCents),
      });
      if (orders.length === DEMO_BATCH_ORDERS) {
        yield { orders, orderItems };
        orders = [];
        orderItems = [];
      }
    }
    if (orders.length > 0) yield { orders, orderItems };
  }

  const publicProducts: DemoProduct[] = products.map(({ id, name, category, price }) => ({
    id,
    name,
    category,
    price,
  }));
  return { customers, products: publicProducts, orderBatches: orderBatches() };
}

/**
 * Generates the whole demo shop at once ({@link generateDemoShop}'s batches joined): for tests and
 * fixtures; the demo database is loaded batch by batch.
 */
export function generateDemoData(
  seed: number = DEFAULT_DEMO_SEED,
  range: DemoRange = { firstDay: DEMO_FIRST_DAY, lastDay: DEMO_LAST_DAY },
): DemoData {
  const shop = generateDemoShop(seed, range);
  const orders: DemoOrder[] = [];
  const orderItems: DemoOrderItem[] = [];
  for (const batch of shop.orderBatches) {
    orders.push(...batch.orders);
    orderItems.push(...batch.orderItems);
  }
  return { customers: shop.customers, products: shop.products, orders, orderItems };
}
