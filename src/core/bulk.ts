// A bulk write: one request that creates many resources, all or nothing (docs/rest.md, Bulk
// writes). The bound and the way an item's failure is told are the same for every transport: a
// problem of one item is the whole write's, its fields named from the item's index (`[17].title`),
// as the body's validation names them.
import { AppError, type ErrorDetail, isAppError } from '../errors.js'

/** The most items one bulk write creates: past it, the write is refused whole, before any work. */
export const BULK_MAX_ITEMS = 1_000

/**
 * The refusal of a bulk write of `items` items, before any is looked at: none (400), or past the
 * bound (413); undefined within it.
 */
export function bulkSizeRefusal(items: number): AppError | undefined {
  if (items === 0) return new AppError('BAD_REQUEST', `The array is empty: a bulk write creates 1 to ${BULK_MAX_ITEMS} items`)
  if (items > BULK_MAX_ITEMS) return new AppError('PAYLOAD_TOO_LARGE', `The array holds ${items} items: a bulk write creates at most ${BULK_MAX_ITEMS}`)
  return undefined
}

/** `field` of the item at `index`: `[17].title`; the item itself when `field` is empty. */
export const itemField = (index: number, field: string): string =>
  field === '' ? `[${index}]` : field.startsWith('[') ? `[${index}]${field}` : `[${index}].${field}`

/**
 * `work`, done for the item at `index`: an AppError it throws is thrown again with the item named
 * in its details (a detail of the item's own, `[3]`, when it had none), its code and message kept.
 */
export async function forItem<T>(index: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (!isAppError(error)) throw error
    const details: readonly ErrorDetail[] = error.details ?? [{ field: '', message: error.message }]
    throw new AppError(
      error.code,
      error.message,
      details.map((detail) => ({ field: itemField(index, detail.field), message: detail.message })),
      { retryAfterS: error.retryAfterS, requiredScope: error.requiredScope, cause: error },
    )
  }
}

/**
 * Each item's parent (its author, its post, its album) by its address (an id, or a path's ids),
 * each parent loaded and checked once, in the order the items first name them: a parent that is missing, or that the caller may not write
 * under, fails the write as the first item naming it (forItem).
 */
export async function parentsOfItems<A, P>(addresses: readonly A[], load: (address: A) => Promise<P>): Promise<P[]> {
  const loaded = new Map<string, P>()
  const parents: P[] = []
  for (const [index, address] of addresses.entries()) {
    const key = JSON.stringify(address)
    let parent = loaded.get(key)
    if (parent === undefined) {
      parent = await forItem(index, () => load(address))
      loaded.set(key, parent)
    }
    parents.push(parent)
  }
  return parents
}
