// Deterministic fake data in the shape of the well-known fake APIs (JSONPlaceholder): the same
// seed gives the same users, posts, comments and todos on every machine. No download. The
// features' seed sections (src/<feature>/<feature>.seed.ts) draw from it.

/**
 * Fake timestamps lie in the two years before this instant, so the data is the same every day:
 * users join in the first month (from SEED_START), what they write follows (from SEED_ACTIVITY).
 */
export const SEED_EPOCH = Date.parse('2026-01-01T00:00:00.000Z')
export const DAY_MS = 86_400_000
export const SEED_START = SEED_EPOCH - 2 * 365 * DAY_MS
export const SEED_ACTIVITY = SEED_START + 31 * DAY_MS

/** mulberry32: a tiny, fast PRNG; plenty for fake data, never for secrets. */
export function createRandom(seed: number) {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1))
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T
  return { next, int, pick }
}
export type Random = ReturnType<typeof createRandom>

/** The ten users of the classic fake API, so the demo looks familiar. */
export const DEMO_NAMES = [
  'Leanne Graham',
  'Ervin Howell',
  'Clementine Bauch',
  'Patricia Lebsack',
  'Chelsey Dietrich',
  'Dennis Schulist',
  'Kurtis Weissnat',
  'Nicholas Runolfsdottir',
  'Glenna Reichert',
  'Clementina DuBuque',
] as const

const FIRST_NAMES = [
  'Ada',
  'Alan',
  'Barbara',
  'Brian',
  'Carla',
  'Dennis',
  'Edsger',
  'Frances',
  'Grace',
  'Guido',
  'Hedy',
  'Ivan',
  'Jean',
  'Ken',
  'Linus',
  'Margaret',
  'Niklaus',
  'Ole',
  'Radia',
  'Sophie',
  'Tim',
  'Ursula',
  'Vint',
  'Whitfield',
  'Xavier',
  'Yukihiro',
  'Zelda',
  'Anders',
  'Bjarne',
  'Katherine',
] as const
const LAST_NAMES = [
  'Lovelace',
  'Turing',
  'Liskov',
  'Kernighan',
  'Ritchie',
  'Dijkstra',
  'Allen',
  'Hopper',
  'Rossum',
  'Lamarr',
  'Sutherland',
  'Sammet',
  'Thompson',
  'Torvalds',
  'Hamilton',
  'Wirth',
  'Dahl',
  'Perlman',
  'Wilson',
  'Berners-Lee',
  'Franklin',
  'Cerf',
  'Diffie',
  'Leroy',
  'Matsumoto',
  'Hejlsberg',
  'Stroustrup',
  'Johnson',
  'Goldberg',
  'Knuth',
] as const

const WORDS = (
  'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et ' +
  'dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea ' +
  'commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur ' +
  'excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum'
).split(' ')

export function words(random: Random, min: number, max: number): string {
  const count = random.int(min, max)
  const out: string[] = []
  for (let i = 0; i < count; i++) out.push(random.pick(WORDS))
  return out.join(' ')
}

export function sentence(random: Random): string {
  const text = words(random, 6, 14)
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`
}

export function paragraph(random: Random, sentences: number): string {
  const out: string[] = []
  for (let i = 0; i < sentences; i++) out.push(sentence(random))
  return out.join(' ')
}

/** The n-th user ever seeded (1-based): the demo's ten names first, then generated ones. */
export function fakeName(random: Random, n: number): string {
  return n <= DEMO_NAMES.length ? (DEMO_NAMES[n - 1] as string) : `${random.pick(FIRST_NAMES)} ${random.pick(LAST_NAMES)}`
}

/** Unique for each n; the demo's ten keep plain addresses. Reserved domains only (RFC 2606). */
export function fakeEmail(name: string, n: number): string {
  const local = name
    .toLowerCase()
    .replace(/[^a-z]+/g, '.')
    .replace(/^\.|\.$/g, '')
  return n <= DEMO_NAMES.length ? `${local}@example.com` : `${local}.${n}@example.org`
}
