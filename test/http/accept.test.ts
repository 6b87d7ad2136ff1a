// The one Accept parser: lists, parameters, quoting and quality, read the same for every negotiation.
import { describe, expect, it } from 'vitest'
import { isAcceptable, isMediaType, parseAccept } from '../../src/http/accept.js'

describe('parseAccept', () => {
  it('reads no ranges from an absent or blank header, and skips empty list elements', () => {
    expect(parseAccept(undefined)).toEqual([])
    expect(parseAccept('')).toEqual([])
    expect(parseAccept(' , ,')).toEqual([])
    expect(parseAccept('text/html, ,application/json').map((r) => `${r.type}/${r.subtype}`)).toEqual(['text/html', 'application/json'])
  })

  it('reads type, subtype and parameters in the order written, ignoring whitespace and case', () => {
    expect(parseAccept(' Text/HTML ;Level = 1 , application/JSON;q=0.9, */*;q=0.1')).toEqual([
      { type: 'text', subtype: 'html', params: { level: '1' }, q: 1 },
      { type: 'application', subtype: 'json', params: {}, q: 0.9 },
      { type: '*', subtype: '*', params: {}, q: 0.1 },
    ])
  })

  it('unquotes quoted values, in which commas and semicolons do not split', () => {
    expect(parseAccept('application/vnd.threadline+json; version="2"; note="a, b; \\"c\\"", text/plain')).toEqual([
      { type: 'application', subtype: 'vnd.threadline+json', params: { version: '2', note: 'a, b; "c"' }, q: 1 },
      { type: 'text', subtype: 'plain', params: {}, q: 1 },
    ])
  })

  it('keeps the first of a repeated parameter, and reads a quoted q', () => {
    expect(parseAccept('a/b; version=1; version=2; q="0.5"')).toEqual([{ type: 'a', subtype: 'b', params: { version: '1' }, q: 0.5 }])
  })

  it.each([
    ['q=1', true],
    ['q=0.001', true],
    ['q=0', false],
    ['q=0.000', false],
    ['Q=0', false],
    ['q=', false],
    ['q=abc', false],
  ])('a range with %s is acceptable: %s', (parameter, acceptable) => {
    const [range] = parseAccept(`application/json;${parameter}`)
    expect(range !== undefined && isAcceptable(range)).toBe(acceptable)
  })

  it('matches a media type exactly: a wildcard matches only a wildcard', () => {
    const [json, any, half] = parseAccept('application/json, */*, application/*')
    expect(json && isMediaType(json, 'application/json')).toBe(true)
    expect(any && isMediaType(any, 'application/json')).toBe(false)
    expect(any && isMediaType(any, '*/*')).toBe(true)
    expect(half && isMediaType(half, 'application/*')).toBe(true)
    const [bare] = parseAccept('json')
    expect(bare).toEqual({ type: 'json', subtype: '', params: {}, q: 1 })
  })
})
