// RecentlyUsed (src/recently-used.ts): the bounded map behind the representation cache, the
// statements, the known callers and the persisted queries.
import { describe, expect, it } from 'vitest'
import { RecentlyUsed } from '../src/recently-used.js'

const present = <V>(map: RecentlyUsed<string, V>, keys: string[]) => keys.filter((key) => map.peek(key) !== undefined)

describe('RecentlyUsed', () => {
  it('keeps a count of entries, the oldest not used since going first', () => {
    const map = new RecentlyUsed<string, number>(3)
    map.set('a', 1)
    map.set('b', 2)
    map.set('c', 3)
    expect(map.get('a')).toBe(1)
    map.set('d', 4) // b goes: a was used, and is passed over once
    expect(present(map, ['a', 'b', 'c', 'd'])).toEqual(['a', 'c', 'd'])
    map.set('e', 5) // c: a was passed over, and not used since
    map.set('f', 6) // a
    expect(present(map, ['a', 'c', 'd', 'e', 'f'])).toEqual(['d', 'e', 'f'])
    expect(map.size).toBe(3)
  })

  it('keeps within a budget of what its entries cost and a count of entries, and keeps nothing that costs more than the whole budget', () => {
    const map = new RecentlyUsed<string, string>(10, (_key, value) => value.length, 4)
    map.set('long', 'x'.repeat(11))
    expect(map.has('long')).toBe(false)
    map.set('a', 'xxxx')
    map.set('b', 'xxxx')
    map.set('c', 'xx') // 10 spent
    map.set('d', 'x') // over the budget: a goes (7)
    expect(present(map, ['a', 'b', 'c', 'd'])).toEqual(['b', 'c', 'd'])
    map.set('e', '')
    map.set('f', '') // over the count: b goes
    expect(present(map, ['b', 'c', 'd', 'e', 'f'])).toEqual(['c', 'd', 'e', 'f'])
    // A value set again replaces the old one and its cost.
    map.set('c', 'xxxxxxxxx') // 9 + 1: d, e and f cost 1 together
    expect(present(map, ['c', 'd', 'e', 'f'])).toEqual(['c', 'd', 'e', 'f'])
    expect(map.delete('c')).toBe(true)
    expect(map.delete('c')).toBe(false)
  })

  it('tells a value without marking it used (peek)', () => {
    const map = new RecentlyUsed<string, number>(2)
    map.set('a', 1)
    map.set('b', 2)
    expect(map.peek('a')).toBe(1)
    map.set('c', 3)
    expect(present(map, ['a', 'b', 'c'])).toEqual(['b', 'c'])
  })
})
