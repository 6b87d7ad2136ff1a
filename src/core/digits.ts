// Numbers written for people, in English: 12,345. Intl's formatting (toLocaleString) reads some
// 5 MB of ICU's locale data into the process for a comma, and a server kept it resident for the
// one description that needed it.

/** An integer with its digits grouped by thousands, as English writes it: 1,000, -12,345. */
export function withThousands(integer: number): string {
  return String(Math.trunc(integer)).replace(/\B(?=(\d{3})+$)/g, ',')
}
