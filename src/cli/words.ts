// The words the data commands' messages are built of, from the sections' names and nouns.

/** `n` things in words: 1 user, 2 users (`many`: a section's name). */
export const count = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** Words as a list: 'a', 'a and b', 'a, b and c' (or `or`). */
export function listed(words: readonly string[], last: 'and' | 'or' = 'and'): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`
}
