// The executable schema as the GraphQL endpoint assembles it: the parts' SDL, their resolvers set on
// it, the DateTime scalar's behaviour, and the start refused for a resolver the SDL has no place for
// or a mutation that does not declare its input. Run by graphql-js itself, with no server.
import { buildSchema, graphql } from 'graphql'
import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import type { Caller } from '../../src/core/caller.js'
import { AppError } from '../../src/errors.js'
import type { GraphQLContext } from '../../src/graphql/context.js'
import { attachResolvers, type GraphQLPart, typeDefsOf } from '../../src/graphql/schema.js'
import { mutation } from '../../src/graphql/validated.js'

const note: GraphQLPart = {
  typeDefs: /* GraphQL */ `
    type Note {
      id: ID!
      at: DateTime!
      text: String!
    }
    input NoteInput {
      text: String!
    }
    extend type Query {
      note(at: DateTime!): Note!
    }
    extend type Mutation {
      writeNote(input: NoteInput!): Note!
    }
    extend type Subscription {
      noteWritten: Note!
    }
  `,
  resolvers: {
    Query: { note: (_parent: never, args: { at: string }) => ({ id: 1, at: args.at, text: 'raw' }) },
    Note: { text: (parent: { text: string }) => parent.text.toUpperCase() },
    Mutation: {
      writeNote: mutation({ input: Type.Object({ text: Type.String({ minLength: 1 }) }) }, (input) => ({ id: 2, at: new Date(0), text: input.text })),
    },
  },
}

function schemaOf(parts: readonly GraphQLPart[]) {
  const schema = buildSchema(typeDefsOf(parts), { noLocation: true })
  attachResolvers(schema, parts)
  return schema
}

const contextOf = (caller: Caller | null) => ({ caller }) as unknown as GraphQLContext

/** The service's code of a field's error (the endpoint's formatError sends it as extensions.code). */
const codeOf = (result: { errors?: readonly { originalError?: Error | null }[] }) => {
  const error = result.errors?.[0]?.originalError
  return error instanceof AppError ? error.code : error
}

describe('the executable schema', () => {
  const schema = schemaOf([note])

  it("runs each part's resolvers, object types' fields included, and reads DateTime by its own rules", async () => {
    const read = await graphql({ schema, source: '{ note(at: "2024-01-21T01:00+01:00") { id at text } }', contextValue: contextOf(null) })
    expect(read).toEqual({ data: { note: { id: '1', at: '2024-01-21T00:00:00.000Z', text: 'RAW' } } })

    const refused = await graphql({ schema, source: '{ note(at: "yesterday") { id } }', contextValue: contextOf(null) })
    expect(refused.errors?.[0]?.message).toMatch(/^DateTime must be/)
  })

  it('refuses a mutation to an anonymous caller and validates a signed-in caller’s input before the resolver runs', async () => {
    const source = 'mutation($text: String!) { writeNote(input: { text: $text }) { id at text } }'
    const anonymous = await graphql({ schema, source, variableValues: { text: 'hello' }, contextValue: contextOf(null) })
    expect(codeOf(anonymous)).toBe('UNAUTHENTICATED')

    const caller = { id: 1, role: 'user' } as unknown as Caller
    const invalid = await graphql({ schema, source, variableValues: { text: '' }, contextValue: contextOf(caller) })
    expect(codeOf(invalid)).toBe('VALIDATION_ERROR')

    const written = await graphql({ schema, source, variableValues: { text: 'hello' }, contextValue: contextOf(caller) })
    expect(written).toEqual({ data: { writeNote: { id: '2', at: '1970-01-01T00:00:00.000Z', text: 'HELLO' } } })
  })

  it('fails the start for a resolver of a type or a field the SDL lacks, and for a mutation that declares no input', () => {
    const unknownType: GraphQLPart = { typeDefs: '', resolvers: { Nothing: { id: () => 1 } } }
    expect(() => schemaOf([note, unknownType])).toThrow('The schema has no object type Nothing for its resolvers')

    const unknownField: GraphQLPart = { typeDefs: '', resolvers: { Note: { title: () => 'x' } } }
    expect(() => schemaOf([note, unknownField])).toThrow('The schema has no field Note.title for its resolver')

    const undeclared: GraphQLPart = { typeDefs: 'extend type Mutation { wipe: Boolean! }', resolvers: { Mutation: { wipe: () => true } } }
    expect(() => schemaOf([note, undeclared])).toThrow('Mutation.wipe is not built by mutation() or mutationWithoutInput()')
  })
})
