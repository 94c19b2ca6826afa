/**
 * Fixed reference lists behind the demo shop: countries (with their share of customers, cities
 * and plausible names) and the product catalog. Hand-written so the demo reads like a real shop.
 */

/** One country of the demo shop's customer base. */
export interface CountrySpec {
  /** English country name as stored in `customers.country`. */
  name: string;
  /** Relative share of customers (India and the United States largest). */
  weight: number;
  /** Cities, most populous first; earlier cities get more customers. */
  cities: readonly string[];
  firstNames: readonly string[];
  lastNames: readonly string[];
  /** Relative weights of `card`, `upi`, `bank_transfer`, `cash_on_delivery`, `wallet` for retail buyers. */
  payments: readonly [number, number, number, number, number];
}

/** Payment methods, in the order of {@link CountrySpec.payments}. */
export const PAYMENT_METHODS = ['card', 'upi', 'bank_transfer', 'cash_on_delivery', 'wallet'] as const;

/** Customer countries; weights sum to 100 (percent of customers). */
// biome-ignore format: hand-aligned reference data
export const COUNTRIES: readonly CountrySpec[] = [
  {
    name: 'India',
    weight: 30,
    cities: ['Mumbai', 'Delhi', 'Bengaluru', 'Hyderabad', 'Chennai', 'Kolkata', 'Pune', 'Ahmedabad', 'Jaipur'],
    firstNames: ['Aarav', 'Priya', 'Rohan', 'Ananya', 'Vikram', 'Sneha', 'Arjun', 'Kavya', 'Rahul', 'Pooja',
      'Aditya', 'Neha', 'Sanjay', 'Deepa', 'Karan', 'Meera', 'Ishaan', 'Divya', 'Amit', 'Lakshmi'],
    lastNames: ['Sharma', 'Patel', 'Singh', 'Kumar', 'Gupta', 'Reddy', 'Iyer', 'Nair', 'Mehta', 'Joshi',
      'Das', 'Rao', 'Chatterjee', 'Verma', 'Agarwal', 'Kapoor'],
    payments: [25, 45, 5, 15, 10],
  },
  {
    name: 'United States',
    weight: 24,
    cities: ['New York', 'Los Angeles', 'Chicago', 'Houston', 'Phoenix', 'Seattle', 'Boston', 'Austin',
      'Miami', 'Denver'],
    firstNames: ['James', 'Mary', 'Michael', 'Jennifer', 'David', 'Linda', 'Robert', 'Emily', 'William',
      'Jessica', 'Daniel', 'Sarah', 'Christopher', 'Ashley', 'Matthew', 'Olivia', 'Tyler', 'Madison'],
    lastNames: ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez',
      'Martinez', 'Wilson', 'Anderson', 'Taylor', 'Thomas', "O'Connor", 'Nguyen'],
    payments: [62, 0, 6, 2, 30],
  },
  {
    name: 'United Kingdom',
    weight: 9,
    cities: ['London', 'Manchester', 'Birmingham', 'Leeds', 'Glasgow', 'Bristol', 'Liverpool', 'Edinburgh'],
    firstNames: ['Oliver', 'Amelia', 'George', 'Isla', 'Harry', 'Ava', 'Jack', 'Emily', 'Charlie', 'Sophie',
      'Thomas', 'Grace', 'Alfie', 'Freya'],
    lastNames: ['Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Davies', 'Evans', 'Thomas',
      'Roberts', 'Walker', 'Wright', 'Hughes', 'Clarke'],
    payments: [65, 0, 10, 0, 25],
  },
  {
    name: 'Germany',
    weight: 9,
    cities: ['Berlin', 'Hamburg', 'München', 'Köln', 'Frankfurt am Main', 'Stuttgart', 'Düsseldorf', 'Leipzig'],
    firstNames: ['Lukas', 'Anna', 'Leon', 'Sophie', 'Jonas', 'Marie', 'Felix', 'Lena', 'Maximilian', 'Hannah',
      'Paul', 'Laura', 'Jürgen', 'Katrin'],
    lastNames: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Schulz',
      'Hoffmann', 'Koch', 'Richter', 'Groß', 'Köhler'],
    payments: [40, 0, 30, 5, 25],
  },
  {
    name: 'Brazil',
    weight: 8,
    cities: ['São Paulo', 'Rio de Janeiro', 'Brasília', 'Salvador', 'Belo Horizonte', 'Curitiba',
      'Porto Alegre', 'Recife'],
    firstNames: ['João', 'Maria', 'Pedro', 'Ana', 'Lucas', 'Juliana', 'Gabriel', 'Fernanda', 'Rafael',
      'Beatriz', 'Mateus', 'Camila', 'Thiago', 'Larissa'],
    lastNames: ['Silva', 'Santos', 'Oliveira', 'Souza', 'Lima', 'Pereira', 'Costa', 'Ferreira', 'Almeida',
      'Carvalho', 'Gonçalves', 'Araújo', 'Ribeiro', 'Rocha'],
    payments: [50, 0, 15, 10, 25],
  },
  {
    name: 'Japan',
    weight: 7,
    cities: ['Tokyo', 'Osaka', 'Yokohama', 'Nagoya', 'Sapporo', 'Fukuoka', 'Kyoto', 'Kobe'],
    firstNames: ['Haruto', 'Yui', 'Sota', 'Hina', 'Ren', 'Aoi', 'Yuto', 'Sakura', 'Hiroshi', 'Yuki', 'Takumi',
      'Mei', 'Kenji', 'Akiko'],
    lastNames: ['Sato', 'Suzuki', 'Takahashi', 'Tanaka', 'Watanabe', 'Ito', 'Yamamoto', 'Nakamura',
      'Kobayashi', 'Kato', 'Yoshida', 'Yamada', 'Sasaki', 'Matsumoto'],
    payments: [55, 0, 10, 15, 20],
  },
  {
    name: 'Australia',
    weight: 6,
    cities: ['Sydney', 'Melbourne', 'Brisbane', 'Perth', 'Adelaide', 'Canberra'],
    firstNames: ['Jack', 'Charlotte', 'William', 'Olivia', 'Noah', 'Mia', 'Lachlan', 'Chloe', 'Cooper',
      'Ruby', 'Liam', 'Matilda'],
    lastNames: ['Smith', 'Jones', 'Williams', 'Brown', 'Wilson', 'Taylor', 'Johnson', 'White', 'Martin',
      'Anderson', 'Thompson', 'Kelly'],
    payments: [60, 0, 8, 2, 30],
  },
  {
    name: 'Canada',
    weight: 7,
    cities: ['Toronto', 'Montréal', 'Vancouver', 'Calgary', 'Ottawa', 'Edmonton', 'Winnipeg'],
    firstNames: ['Liam', 'Emma', 'Noah', 'Olivia', 'Ethan', 'Chloé', 'Benjamin', 'Charlotte', 'Lucas', 'Léa',
      'Logan', 'Maya', 'Nathan', 'Zoé'],
    lastNames: ['Smith', 'Brown', 'Tremblay', 'Martin', 'Roy', 'Wilson', 'MacDonald', 'Gagnon', 'Johnson',
      'Taylor', 'Côté', 'Campbell', 'Lee', 'Bouchard'],
    payments: [62, 0, 8, 2, 28],
  },
];

/** One product category: brands, base items with list prices, and how often it sells. */
export interface CategorySpec {
  /** Category name as stored in `products.category`. */
  name: string;
  /** Relative chance that an order line comes from this category. */
  popularity: number;
  brands: readonly string[];
  /** Base item names with a list price in whole currency units (before brand markup). */
  items: readonly (readonly [string, number])[];
}

/** Ten categories; 4 brands x 5–6 items each gives ~200–240 combinations, of which ~20 are used per category. */
// biome-ignore format: hand-aligned reference data
export const CATEGORIES: readonly CategorySpec[] = [
  {
    name: 'Electronics',
    popularity: 14,
    brands: ['Voltix', 'Sonara', 'Kairo', 'Lumen'],
    items: [['Wireless Earbuds', 79], ['Noise-Cancelling Headphones', 249], ['Smartwatch', 299],
      ['55" 4K Smart TV', 1299], ['Bluetooth Speaker', 99], ['Smartphone', 899]],
  },
  {
    name: 'Computers',
    popularity: 7,
    brands: ['Nexa', 'Orbitron', 'Pixelcore', 'Tessel'],
    items: [['Ultrabook 14"', 1899], ['Gaming Laptop 16"', 2799], ['27" Monitor', 449],
      ['Mechanical Keyboard', 129], ['Wireless Mouse', 39], ['Tablet 11"', 699]],
  },
  {
    name: 'Home & Kitchen',
    popularity: 13,
    brands: ['Casa Viva', 'Hearth', 'Kitchenry', 'Mizu'],
    items: [['Espresso Machine', 549], ['Air Fryer', 129], ['Chef Knife Set', 159], ['Blender', 89],
      ['Non-Stick Pan Set', 119], ['Robot Vacuum', 399]],
  },
  {
    name: 'Furniture',
    popularity: 5,
    brands: ['Nordhus', 'Oakline', 'Studio Forma', 'Lounge Co'],
    items: [['Ergonomic Office Chair', 449], ['Standing Desk', 699], ['3-Seat Sofa', 1499],
      ['Bookshelf', 189], ['Queen Bed Frame', 899]],
  },
  {
    name: 'Clothing',
    popularity: 14,
    brands: ['Urban Thread', 'Monsoon Lane', 'Northpeak', 'Bella Moda'],
    items: [['Cotton T-Shirt', 19], ['Denim Jeans', 59], ['Rain Jacket', 129], ['Wool Sweater', 89],
      ['Running Shoes', 119], ['Silk Scarf', 45]],
  },
  {
    name: 'Sports & Outdoors',
    popularity: 8,
    brands: ['Summit', 'Trailblaze', 'Aqualine', 'ProForm Athletics'],
    items: [['Yoga Mat', 35], ['Road Bicycle', 1199], ['Camping Tent', 249], ['Dumbbell Set', 179],
      ['Hiking Backpack', 139], ['Treadmill', 1499]],
  },
  {
    name: 'Books',
    popularity: 11,
    brands: ['Penwood Press', 'Lantern Books', 'Atlas House', 'Inkwell'],
    items: [['SQL for Analysts', 39], ['Cookbook: Street Food', 29], ['Thriller Paperback', 15],
      ['Atlas of the World', 65], ["Children's Picture Book", 12]],
  },
  {
    name: 'Beauty & Personal Care',
    popularity: 10,
    brands: ['Glowleaf', 'Ayurva', 'Pure Petal', 'Dermalux'],
    items: [['Face Serum', 39], ['Hair Dryer', 89], ['Sunscreen SPF 50', 19], ['Electric Toothbrush', 69],
      ['Perfume 50ml', 95]],
  },
  {
    name: 'Toys & Games',
    popularity: 8,
    brands: ['Playnest', 'Brickwise', 'Funfair', 'Kiddo'],
    items: [['Building Blocks Set', 59], ['Board Game', 39], ['Remote Control Car', 79], ['Plush Bear', 25],
      ['Game Console', 499]],
  },
  {
    name: 'Grocery',
    popularity: 10,
    brands: ['Green Basket', 'Harvest Table', 'Chai & Co', 'Daily Pantry'],
    items: [['Basmati Rice 5kg', 18], ['Assam Tea 500g', 12], ['Olive Oil 1L', 15], ['Coffee Beans 1kg', 29],
      ['Mixed Nuts 1kg', 24], ['Dark Chocolate Box', 14]],
  },
];

/** Brand price multipliers in percent, by brand position (budget … premium). */
export const BRAND_MARKUP_PERCENT = [85, 100, 115, 140] as const;
