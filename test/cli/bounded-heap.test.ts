// The old generation's bound a file-reading command runs under (cli/bounded-heap.ts).
import { describe, expect, it } from 'vitest'
import { heapBoundMb } from '../../src/cli/bounded-heap.js'

const MB = 2 ** 20

describe('heapBoundMb', () => {
  it('is 128 MB for small files and grows by half of the file past that', () => {
    expect(heapBoundMb(0)).toBe(128)
    expect(heapBoundMb(100 * MB)).toBe(128)
    expect(heapBoundMb(218 * MB)).toBe(173)
    expect(heapBoundMb(2000 * MB)).toBe(1064)
  })
})
