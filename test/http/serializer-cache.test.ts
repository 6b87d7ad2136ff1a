// Runs once, on SQLite: the compiled serializers are the subject; no store is opened.
// Routes that answer with the same schema share one compiled serializer; a serializer is never
// shared where the schema, the shared schemas it references or the options differ. A union of
// objects told apart by one property's type is written by the branch that type names.
import { describe, expect, it } from 'vitest'
import { buildSharedSerializer } from '../../src/http/serializer-cache.js'

const route = (schema: unknown) => ({ method: 'GET', url: '/x', httpStatus: '200', schema })
const item = () => ({ type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } })

describe('shared response serializers', () => {
  it('compiles a schema once, for every route and every app that answers with it', () => {
    const first = buildSharedSerializer({}, {})(route(item()))
    const again = buildSharedSerializer({}, {})(route(item()))
    expect(again).toBe(first)
    expect(first({ id: 1, name: 'Ada', password: 'no' })).toBe('{"id":1,"name":"Ada"}')
  })

  it('compiles another schema apart, and each serializes by its own', () => {
    const compile = buildSharedSerializer({}, {})
    const withName = compile(route(item()))
    const idOnly = compile(route({ type: 'object', properties: { id: { type: 'integer' } } }))
    expect(idOnly).not.toBe(withName)
    expect(idOnly({ id: 2, name: 'Bob' })).toBe('{"id":2}')
    expect(withName({ id: 2, name: 'Bob' })).toBe('{"id":2,"name":"Bob"}')
  })

  it('does not share across different shared schemas or options', () => {
    const referring = route({ $ref: 'thing#' })
    const named = buildSharedSerializer({ thing: { $id: 'thing', type: 'object', properties: { name: { type: 'string' } } } }, {})(referring)
    const aged = buildSharedSerializer({ thing: { $id: 'thing', type: 'object', properties: { age: { type: 'integer' } } } }, {})(referring)
    expect(aged).not.toBe(named)
    expect(named({ name: 'Ada', age: 36 })).toBe('{"name":"Ada"}')
    expect(aged({ name: 'Ada', age: 36 })).toBe('{"age":36}')

    const plain = buildSharedSerializer({}, {})(route(item()))
    const rounded = buildSharedSerializer({}, { rounding: 'ceil' })(route(item()))
    expect(rounded).not.toBe(plain)
  })

  it('writes a union told apart by one property’s type by that branch, as the whole union would', () => {
    const envelope = (data: unknown) => ({
      type: 'object',
      properties: { data, meta: { type: 'object', properties: { n: { type: 'integer' } } } },
      required: ['data', 'meta'],
    })
    const union = { anyOf: [envelope({ type: 'array', items: item() }), envelope(item())] }
    const serialize = buildSharedSerializer({}, {})(route(union))
    const one = { data: { id: 1, name: 'Ada', password: 'no' }, meta: { n: 1, extra: true } }
    const many = {
      data: [
        { id: 1, name: 'Ada', password: 'no' },
        { id: 2, name: 'Bob' },
      ],
      meta: { n: 2 },
    }
    expect(serialize(one)).toBe('{"data":{"id":1,"name":"Ada"},"meta":{"n":1}}')
    expect(serialize(many)).toBe('{"data":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}],"meta":{"n":2}}')
    // A value of no branch's type is refused, as fast-json-stringify refuses it.
    expect(() => serialize({ data: 'neither', meta: { n: 0 } })).toThrow(/does not match schema definition/)
    // A union whose branches the property does not tell apart is left to fast-json-stringify, which validates.
    const alike = buildSharedSerializer({}, {})(route({ anyOf: [envelope(item()), envelope({ type: 'object', properties: { id: { type: 'integer' } } })] }))
    expect(alike({ data: { id: 3, name: 'Cy' }, meta: { n: 3 } })).toBe('{"data":{"id":3,"name":"Cy"},"meta":{"n":3}}')
  })
})
