// Ids arrive as text from every transport (REST paths, GraphQL ID). One parser decides what names
// a row: a canonical decimal integer from 1 to 2^31-1, the range every dialect's integer holds.

export const MAX_ID = 2_147_483_647

export type IdInput = string | number

/** The id as a number, or undefined when the text cannot name any row. */
export function parseId(input: IdInput): number | undefined {
  const id = typeof input === 'number' ? input : /^[1-9]\d{0,9}$/.test(input) ? Number(input) : NaN
  return Number.isInteger(id) && id >= 1 && id <= MAX_ID ? id : undefined
}
