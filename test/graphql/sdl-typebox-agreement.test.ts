// The GraphQL SDL as served and the TypeBox schemas REST validates and documents with say the same
// thing about every resource and every write: the same field names, the same kind of
// value (ID, String, DateTime, Int, Boolean, an enum and its values) and the same nullability. Where the two
// transports differ on purpose, the difference is listed below with its reason, and the list is
// checked too, so that an exception that no longer holds is removed.
import {
  buildSchema,
  getNullableType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLSchema,
  type GraphQLType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql'
import type { TSchema } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Album, CreateAlbumBody, UpdateAlbumBody } from '../../src/albums/albums.schemas.js'
import { Comment, CreateCommentBody, UpdateCommentBody } from '../../src/comments/comments.schemas.js'
import { Id } from '../../src/core/schema-types.js'
import { CreatePhotoBody, Photo, UpdatePhotoBody } from '../../src/photos/photos.schemas.js'
import { CreatePostBody, Post, UpdatePostBody } from '../../src/posts/posts.schemas.js'
import { CreateTodoBody, Todo, UpdateTodoBody } from '../../src/todos/todos.schemas.js'
import { Address, Company, CreateUserBody, UpdateUserBody, User } from '../../src/users/users.schemas.js'
import { buildTestApp } from '../helpers/build-test-app.js'

/** One field as each side describes it: its kind of value and whether it may be absent or null. */
interface FieldShape {
  kind: string
  nullable: boolean
}

/** A GraphQL type (an object or input type, or a field's arguments) beside the TypeBox object REST uses. */
interface Pairing {
  graphql: string
  typebox: TSchema
  /** Field name → why only one side has it, or why its kind differs. */
  exceptions: Record<string, string>
}

const RELATION = 'GraphQL resolves the related object where REST gives its id or a link'
/** An object a field holds is a type of its own in GraphQL: paired on its own below. */
const EMBEDDED = (type: string) => `an embedded object: GraphQL's ${type}, paired below`
const PROFILE = (suffix = '') => ({ address: EMBEDDED(`Address${suffix}`), company: EMBEDDED(`Company${suffix}`) })

const PAIRINGS: Record<string, Pairing> = {
  User: {
    graphql: 'User',
    typebox: User,
    exceptions: {
      posts: RELATION,
      comments: RELATION,
      todos: RELATION,
      albums: RELATION,
      postsConnection: RELATION,
      todosConnection: RELATION,
      albumsConnection: RELATION,
      ...PROFILE(),
    },
  },
  Address: { graphql: 'Address', typebox: Address, exceptions: { geo: EMBEDDED('Geo') } },
  Geo: { graphql: 'Geo', typebox: Address.properties.geo, exceptions: {} },
  Company: { graphql: 'Company', typebox: Company, exceptions: {} },
  AddressInput: { graphql: 'AddressInput', typebox: Address, exceptions: { geo: EMBEDDED('GeoInput') } },
  GeoInput: { graphql: 'GeoInput', typebox: Address.properties.geo, exceptions: {} },
  CompanyInput: { graphql: 'CompanyInput', typebox: Company, exceptions: {} },
  Post: {
    graphql: 'Post',
    typebox: Post,
    exceptions: {
      userId: 'REST-only: GraphQL gives the author as author: User!',
      author: RELATION,
      comments: RELATION,
      commentsConnection: RELATION,
    },
  },
  Comment: {
    graphql: 'Comment',
    typebox: Comment,
    exceptions: {
      postId: 'REST-only: GraphQL gives the post as post: Post!',
      authorId: 'REST-only: GraphQL gives the author as author: User (null for a guest comment)',
      author: 'REST embeds a summary ({ id, name }); GraphQL resolves the whole User',
      post: RELATION,
    },
  },
  Todo: {
    graphql: 'Todo',
    typebox: Todo,
    exceptions: { userId: 'REST-only: GraphQL gives the owner as user: User!', user: RELATION },
  },
  CreateUserInput: { graphql: 'CreateUserInput', typebox: CreateUserBody, exceptions: PROFILE('Input') },
  UpdateUserInput: { graphql: 'UpdateUserInput', typebox: UpdateUserBody, exceptions: PROFILE('Input') },
  CreatePostInput: { graphql: 'CreatePostInput', typebox: CreatePostBody, exceptions: {} },
  UpdatePostInput: { graphql: 'UpdatePostInput', typebox: UpdatePostBody, exceptions: {} },
  AddCommentInput: {
    graphql: 'AddCommentInput',
    typebox: CreateCommentBody,
    exceptions: { postId: 'GraphQL-only: REST takes the post in the path, POST /posts/{id}/comments' },
  },
  UpdateCommentInput: { graphql: 'UpdateCommentInput', typebox: UpdateCommentBody, exceptions: {} },
  // A new todo has a single field: GraphQL takes it as an argument, addTodo(text: String!).
  'Mutation.addTodo': { graphql: 'Mutation.addTodo', typebox: CreateTodoBody, exceptions: {} },
  UpdateTodoInput: { graphql: 'UpdateTodoInput', typebox: UpdateTodoBody, exceptions: {} },
  Album: {
    graphql: 'Album',
    typebox: Album,
    exceptions: { userId: 'REST-only: GraphQL gives the owner as user: User!', user: RELATION, photos: RELATION, photosConnection: RELATION },
  },
  Photo: {
    graphql: 'Photo',
    typebox: Photo,
    exceptions: { albumId: 'REST-only: GraphQL gives the album as album: Album!', album: RELATION },
  },
  CreateAlbumInput: { graphql: 'CreateAlbumInput', typebox: CreateAlbumBody, exceptions: {} },
  UpdateAlbumInput: { graphql: 'UpdateAlbumInput', typebox: UpdateAlbumBody, exceptions: {} },
  CreatePhotoInput: {
    graphql: 'CreatePhotoInput',
    typebox: CreatePhotoBody,
    exceptions: { albumId: 'GraphQL-only: REST takes the album in the path, POST /users/{userId}/albums/{albumId}/photos' },
  },
  UpdatePhotoInput: { graphql: 'UpdatePhotoInput', typebox: UpdatePhotoBody, exceptions: {} },
}

function isId(schema: TSchema): boolean {
  return JSON.stringify(schema) === JSON.stringify(Id)
}

/**
 * A TypeBox object's fields: a field is nullable where it is optional or its type admits null, as
 * GraphQL has one word for both (an input field may be left out or sent as null: where the REST
 * schema refuses null, the validation both transports share refuses it too).
 */
function typeboxFields(object: TSchema): Map<string, FieldShape> {
  const { properties, required = [] } = object as { properties: Record<string, TSchema>; required?: string[] }
  const fields = new Map<string, FieldShape>()
  for (const [name, schema] of Object.entries(properties)) {
    const { type, enum: values } = schema as { type: string | string[]; enum?: string[] }
    const types = Array.isArray(type) ? type : [type]
    const base = types.filter((t) => t !== 'null')
    expect(base, `${name} has one type besides null`).toHaveLength(1)
    const kind = isId(schema) ? 'ID' : values !== undefined ? `enum(${[...values].sort().join(', ')})` : typeboxKind(schema, base[0] ?? '')
    fields.set(name, { kind, nullable: !required.includes(name) || types.includes('null') })
  }
  return fields
}

const TYPEBOX_SCALARS: Record<string, string> = { string: 'String', integer: 'Int', number: 'Float', boolean: 'Boolean' }

/**
 * An object is named by its fields, as GraphQL's by its type's name: the two never agree, and an
 * embedded object is an exception. A date-time string is GraphQL's DateTime.
 */
function typeboxKind(schema: TSchema, type: string): string {
  if (type === 'object') return `object(${Object.keys((schema as { properties: object }).properties).join(', ')})`
  if (type === 'string' && (schema as { format?: string }).format === 'date-time') return 'DateTime'
  return TYPEBOX_SCALARS[type] ?? type
}

function graphqlKind(type: GraphQLType): string {
  const named = getNullableType(type)
  if (isListType(named)) return `[${graphqlKind(named.ofType)}]`
  if (isEnumType(named))
    return `enum(${named
      .getValues()
      .map((value) => value.name)
      .sort()
      .join(', ')})`
  if (isScalarType(named)) return named.name
  return `object ${named.name}`
}

/** A GraphQL object type's, input type's or field's arguments' fields, as the served SDL has them. */
function graphqlFields(schema: GraphQLSchema, name: string): Map<string, FieldShape> {
  let fields: readonly (GraphQLField<unknown, unknown> | GraphQLInputField | GraphQLArgument)[]
  const [typeName = '', fieldName] = name.split('.')
  const type = schema.getType(typeName)
  if (fieldName !== undefined) {
    if (!isObjectType(type)) throw new Error(`${typeName} is not an object type`)
    const field = type.getFields()[fieldName]
    if (field === undefined) throw new Error(`${name} is not in the SDL`)
    fields = field.args
  } else if (isObjectType(type) || isInputObjectType(type)) {
    fields = Object.values(type.getFields())
  } else {
    throw new Error(`${name} is not an object or input type in the SDL`)
  }
  return new Map(fields.map((field) => [field.name, { kind: graphqlKind(field.type), nullable: !isNonNullType(field.type) }]))
}

describe('the GraphQL SDL and the TypeBox schemas', () => {
  let sdl: GraphQLSchema
  let close: () => Promise<void>
  beforeAll(async () => {
    const t = await buildTestApp()
    close = () => t.close()
    const res = await t.app.inject({ url: '/graphql/schema.graphql' })
    expect(res.statusCode).toBe(200)
    sdl = buildSchema(res.body)
  })
  afterAll(() => close())

  it.each(Object.entries(PAIRINGS))('agree on %s field by field: name, kind and nullability', (_, { graphql, typebox, exceptions }) => {
    const inGraphql = graphqlFields(sdl, graphql)
    const inTypebox = typeboxFields(typebox)
    for (const name of Object.keys(exceptions)) {
      // An exception must still be one: a field on one side only, or of another kind on each.
      const one = inGraphql.get(name)
      const other = inTypebox.get(name)
      expect(one !== undefined || other !== undefined, `${graphql}.${name} is listed as an exception but is on neither side`).toBe(true)
      expect(one === undefined || other === undefined || one.kind !== other.kind, `${graphql}.${name} is listed as an exception but agrees`).toBe(true)
      inGraphql.delete(name)
      inTypebox.delete(name)
    }
    expect(Object.fromEntries(inGraphql)).toEqual(Object.fromEntries(inTypebox))
  })

  it('pairs every resource type and every Create, Add and Update input the SDL declares', () => {
    // The resources: each type the schema pages through a connection of.
    const resources = Object.keys(sdl.getTypeMap())
      .filter((name) => name.endsWith('Connection') && isObjectType(sdl.getType(name.slice(0, -'Connection'.length))))
      .map((name) => name.slice(0, -'Connection'.length))
    expect(resources).toEqual(expect.arrayContaining(['User', 'Post']))
    const inputs = Object.values(sdl.getTypeMap())
      .filter((type) => isInputObjectType(type) && /^(Create|Add|Update)\w+Input$/.test(type.name))
      .map((type) => type.name)
    const paired = new Set(Object.values(PAIRINGS).map((pairing) => pairing.graphql))
    expect([...resources, ...inputs].filter((name) => !paired.has(name))).toEqual([])
  })
})
