// The representation of a resource's items, for any transport: `select` (the top-level fields sent;
// `id` always), `include` (related resources embedded in each item) and `<relation>.limit` (how many
// items of an embedded list). A feature declares what its items may embed (`<feature>.embeds.ts`);
// each relation is read for a whole page in one batched service call, with the visibility rules of
// that service, never once per item.
import type { Caller } from '../core/caller.js'
import { AppError, type ErrorDetail } from '../errors.js'
import { DEFAULT_PAGE_LIMIT, type ListWindow, MAX_PAGE_LIMIT } from './pagination.js'

/** Names `select` or `include` may carry in one request, repeats counted: a handful is all there is to name. */
export const MAX_REPRESENTATION_NAMES = 20
/** An embedded list's items by default: the newest. `<relation>.limit` asks for up to MAX_PAGE_LIMIT. */
export const DEFAULT_EMBEDDED_LIMIT = DEFAULT_PAGE_LIMIT

type ReadMany = (caller: Caller | null, ids: readonly number[]) => Promise<ReadonlyMap<number, unknown>>
type ReadWindow = (caller: Caller | null, parentIds: readonly number[], window: ListWindow) => Promise<ReadonlyMap<number, readonly unknown[]>>

/** Where a `one` relation's object comes from: the item's field that holds its id, and the collection that id names. */
export interface Reference {
  /** `userId`. */
  readonly foreignKey: string
  /** `users`: the related collection's name (its CollectionSpec's). */
  readonly resource: string
}

/** A related resource an item may embed: one object by id, or a capped list under the item. */
export type Relation<T> =
  | ({ readonly kind: 'one'; readonly keyOf: (item: T) => number | null; readonly read: ReadMany } & Reference)
  | { readonly kind: 'list'; readonly keyOf: (item: T) => number; readonly read: ReadWindow }

/** The fields of T that hold a number, or null for none: those a `one` relation may read its id from. */
type NumberFields<T> = { [K in keyof T]-?: T[K] extends number | null ? K : never }[keyof T] & string

/**
 * The object of `resource` that the item's `foreignKey` names, read for the page by `read` (a
 * service's getMany). An item whose key is null (a guest comment's author) names none: its field stays as it is.
 */
export const embedOne = <T>(foreignKey: NumberFields<T>, resource: string, read: ReadMany): Relation<T> => ({
  kind: 'one',
  keyOf: (item) => item[foreignKey] as number | null,
  foreignKey,
  resource,
  read,
})

/** The newest items under `keyOf(item)`, read for the page by `read` (a service's listOf…). */
export const embedList = <T>(keyOf: (item: T) => number, read: ReadWindow): Relation<T> => ({ kind: 'list', keyOf, read })

/** How an embedded list's description says which items it holds: "newest first (20, or `posts.limit` up to 100)". */
export const newestOf = (relation: string): string => `newest first (${DEFAULT_EMBEDDED_LIMIT}, or \`${relation}.limit\` up to ${MAX_PAGE_LIMIT})`

/** What a resource's items may be represented with: the fields `select` may name, the relations `include` may. */
export interface Embeddable<T> {
  readonly fields: readonly string[]
  readonly relations: Readonly<Record<string, Relation<T>>>
}

/** One relation asked for, with its window when it is a list. */
interface Inclusion<T> {
  readonly name: string
  readonly relation: Relation<T>
  readonly limit: number
}

/** The representation a request asks for; parseRepresentation gives undefined for the whole item, nothing embedded. */
export interface Representation<T> {
  /** The top-level fields to send (with `id`); undefined: all. */
  readonly select: ReadonlySet<string> | undefined
  readonly include: readonly Inclusion<T>[]
}

type RawQuery = Readonly<Record<string, unknown>>
const LIMIT_SUFFIX = '.limit'

/**
 * `select`, `include` and `<relation>.limit` of a query, checked against what the resource offers
 * (BAD_REQUEST naming the parameter otherwise); undefined when the query names none of them (the
 * usual request: two property checks and a look at the keys).
 */
export function parseRepresentation<T>(embeddable: Embeddable<T>, query: RawQuery): Representation<T> | undefined {
  if (query.select === undefined && query.include === undefined && !hasLimitKey(query)) return undefined
  const problems: ErrorDetail[] = []
  const relationNames = Object.keys(embeddable.relations)

  let select: Set<string> | undefined
  if (query.select !== undefined) {
    const names = namesOf(query.select, 'select', problems)
    const unknown = names?.filter((name) => !embeddable.fields.includes(name)) ?? []
    if (unknown.length > 0) problems.push({ field: 'select', message: `${describe(unknown)}: the fields are ${embeddable.fields.join(', ')}` })
    else if (names !== undefined) select = new Set(['id', ...names])
  }

  const included = new Set<string>()
  if (query.include !== undefined) {
    const names = namesOf(query.include, 'include', problems) ?? []
    const unknown = names.filter((name) => !Object.hasOwn(embeddable.relations, name))
    if (unknown.length > 0) {
      const offered = relationNames.length === 0 ? 'this resource embeds nothing' : `the relations are ${relationNames.join(', ')}`
      problems.push({ field: 'include', message: `${describe(unknown)}: ${offered}` })
    } else {
      for (const name of names) included.add(name)
    }
  }

  const limits = new Map<string, number>()
  for (const key of Object.keys(query)) {
    if (!key.endsWith(LIMIT_SUFFIX)) continue
    const name = key.slice(0, -LIMIT_SUFFIX.length)
    const relation = Object.hasOwn(embeddable.relations, name) ? embeddable.relations[name] : undefined
    if (relation?.kind !== 'list') {
      const lists = relationNames.filter((candidate) => embeddable.relations[candidate]?.kind === 'list')
      problems.push({ field: key, message: `is not a list this resource embeds${lists.length === 0 ? '' : ` (${lists.join(', ')})`}` })
    } else if (!included.has(name)) {
      problems.push({ field: key, message: `applies only with include=${name}` })
    } else if (Array.isArray(query[key])) {
      problems.push({ field: key, message: 'must be given once' })
    } else {
      const limit = limitOf(query[key])
      if (limit === undefined) problems.push({ field: key, message: 'must be a positive integer' })
      else limits.set(name, Math.min(limit, MAX_PAGE_LIMIT))
    }
  }

  if (problems.length > 0) throw new AppError('BAD_REQUEST', 'The query parameters are not valid', problems)
  const include = [...included].map((name) => ({
    name,
    relation: embeddable.relations[name] as Relation<T>,
    limit: limits.get(name) ?? DEFAULT_EMBEDDED_LIMIT,
  }))
  return { select, include }
}

/**
 * Rows an embedding may read per rate-limit point past its request's first: GraphQL's rate
 * (src/graphql/pipeline/metering.ts, COST_PER_POINT: a list multiplies what is under it by its page size),
 * so a page of 100 users with 100 posts each costs the same over REST and GraphQL.
 */
export const EMBEDDED_ROWS_PER_POINT = 1_000

/**
 * The rate-limit points the representation's relations take beyond the request's own, for `items`
 * items: the rows they may read (one per item for an object, the list's limit per item for a
 * list), one point per EMBEDDED_ROWS_PER_POINT. The usual page (20 items, a list of 20) takes none.
 */
export function embeddingPoints<T>(representation: Representation<T>, items: number): number {
  const rows = representation.include.reduce((sum, { relation, limit }) => sum + (relation.kind === 'one' ? items : items * limit), 0)
  return Math.floor(rows / EMBEDDED_ROWS_PER_POINT)
}

/** An item as a representation shows it: some of its fields, with `id`, and the relations asked for (not typed here). */
export type Shown<T extends { id: number }> = Partial<T> & Pick<T, 'id'>

/**
 * The items as the representation asks: the selected fields (in the item's order), then each
 * relation, read for all the items at once (one service call per relation).
 */
export async function represent<T extends { id: number }>(representation: Representation<T>, caller: Caller | null, items: readonly T[]): Promise<Shown<T>[]> {
  const embedded = await Promise.all(representation.include.map((inclusion) => readRelation(inclusion, caller, items)))
  const { select } = representation
  return items.map((item) => {
    const shown: Record<string, unknown> = {}
    for (const [field, value] of Object.entries(item)) if (select === undefined || select.has(field)) shown[field] = value
    representation.include.forEach(({ name, relation }, at) => {
      const key = relation.keyOf(item)
      const value = key === null ? undefined : embedded[at]?.get(key)
      if (value !== undefined) shown[name] = value
      else if (relation.kind === 'list') shown[name] = []
    })
    return shown as Shown<T>
  })
}

/** One item as the representation asks (see represent). */
export async function representOne<T extends { id: number }>(representation: Representation<T>, caller: Caller | null, item: T): Promise<Shown<T>> {
  const [shown] = await represent(representation, caller, [item])
  return shown as Shown<T>
}

async function readRelation<T>({ relation, limit }: Inclusion<T>, caller: Caller | null, items: readonly T[]): Promise<ReadonlyMap<number, unknown>> {
  const keys = [...new Set(items.flatMap((item) => relation.keyOf(item) ?? []))]
  if (keys.length === 0) return new Map()
  return relation.kind === 'one' ? relation.read(caller, keys) : relation.read(caller, keys, { limit, offset: 0, order: 'desc' })
}

function hasLimitKey(query: RawQuery): boolean {
  for (const key in query) if (key.endsWith(LIMIT_SUFFIX)) return true
  return false
}

/** A comma-separated list, or the parameter repeated (`select=id&select=title`), deduplicated; undefined when refused. */
function namesOf(value: unknown, parameter: string, problems: ErrorDetail[]): string[] | undefined {
  const parts = (Array.isArray(value) ? value : [value]).flatMap((part) => (typeof part === 'string' ? part.split(',') : [undefined]))
  if (parts.length > MAX_REPRESENTATION_NAMES) {
    problems.push({ field: parameter, message: `may name at most ${MAX_REPRESENTATION_NAMES} names` })
    return undefined
  }
  const names = parts.map((part) => part?.trim())
  if (names.some((name) => name === undefined || name === '')) {
    problems.push({ field: parameter, message: 'must be a comma-separated list of names, none empty' })
    return undefined
  }
  return [...new Set(names as string[])]
}

function limitOf(value: unknown): number | undefined {
  const limit = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value
  return typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 ? limit : undefined
}

const describe = (unknown: readonly string[]): string => `${unknown.map((name) => `\`${name}\``).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} unknown`
