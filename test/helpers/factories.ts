// Builders for the fixtures tests need again and again (a user, a post, a comment, a todo, an album, a
// photo, a token), on
// top of a TestApp, so a test spells out only the values it asserts on. Users are made as the operator
// would (the service, no request, unique e-mail per call); the rest through the REST
// API as their author, so they are what a client would have made: events published, publishedAt set.
import { expect } from 'vitest'
import type { Album } from '../../src/albums/albums.schemas.js'
import type { Comment } from '../../src/comments/comments.schemas.js'
import type { CreatePhotoInput, Photo } from '../../src/photos/photos.schemas.js'
import type { CreatePostInput, Post } from '../../src/posts/posts.schemas.js'
import type { Todo } from '../../src/todos/todos.schemas.js'
import type { CreateUserInput, User } from '../../src/users/users.schemas.js'
import type { TestApp } from './build-test-app.js'

/** Anyone a fixture is made for or by: a user, or just their id. */
export type Someone = Pick<User, 'id'>

/** Who writes a fixture, when not its owner or author (an admin writing for a user). */
interface Writer {
  /** @default the owner's (or author's) token */
  token?: string
}

export interface Factories {
  /** A user with a unique name and e-mail address, unless given. */
  user(overrides?: Partial<CreateUserInput>): Promise<User>
  /** A user as `user` makes one, with a token of theirs. */
  signedIn(overrides?: Partial<CreateUserInput>): Promise<{ user: User; token: string }>
  /** A token of the user's: the one the TestApp issued for admin, alice and bob, else one issued once for this user. */
  token(user: Someone): Promise<string>
  /** A post of the owner's, published unless the status says otherwise. */
  post(owner: Someone, overrides?: Partial<CreatePostInput> & Writer): Promise<Post>
  /** A post of the owner's, as a draft. */
  draft(owner: Someone, overrides?: Partial<Omit<CreatePostInput, 'status'>> & Writer): Promise<Post>
  /** A comment by the author on the post. */
  comment(post: PostAddress, author: Someone, overrides?: { content?: string } & Writer): Promise<Comment>
  /** An open todo of the owner's. */
  todo(owner: Someone, overrides?: { text?: string } & Writer): Promise<Todo>
  /** An album of the owner's. */
  album(owner: Someone, overrides?: { title?: string } & Writer): Promise<Album>
  /** A photo in the album, written by the album's owner. */
  photo(album: AlbumAddress, overrides?: Partial<CreatePhotoInput> & Writer): Promise<Photo>
}

type AlbumAddress = Pick<Album, 'id' | 'userId'>

type PostAddress = Pick<Post, 'id' | 'userId'>

/** Where the API says a post lives (its Location header). */
export const postPath = (post: PostAddress): string => `/api/v1/users/${post.userId}/posts/${post.id}`
/** Where the API says a comment lives (its Location header). */
export const commentPath = (post: PostAddress, comment: Pick<Comment, 'id'>): string => `${postPath(post)}/comments/${comment.id}`
/** Where the API says a todo lives (its Location header). */
export const todoPath = (todo: Pick<Todo, 'id' | 'userId'>): string => `/api/v1/users/${todo.userId}/todos/${todo.id}`
/** Where the API says an album lives (its Location header). */
export const albumPath = (album: AlbumAddress): string => `/api/v1/users/${album.userId}/albums/${album.id}`
/** Where the API says a photo lives (its Location header). */
export const photoPath = (album: AlbumAddress, photo: Pick<Photo, 'id'>): string => `${albumPath(album)}/photos/${photo.id}`

// One run of a test file holds its TestApps, so a counter per module keeps e-mail addresses unique.
let sequence = 0

export function createFactories(t: TestApp): Factories {
  const issued = new Map<number, string>([
    [t.admin.id, t.tokens.admin],
    [t.alice.id, t.tokens.alice],
    [t.bob.id, t.tokens.bob],
  ])
  const token = async (user: Someone): Promise<string> => {
    const known = issued.get(user.id)
    if (known !== undefined) return known
    const fresh = await t.tokenFor(user.id)
    issued.set(user.id, fresh)
    return fresh
  }
  /** POSTs as the writer and answers the created object; anything but 201 fails the test, with the body. */
  const created = async <T>(url: string, writer: Someone, given: string | undefined, json: unknown): Promise<T> => {
    const response = await t.request({ method: 'POST', url, token: given ?? (await token(writer)), json })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().data as T
  }

  const user = (overrides: Partial<CreateUserInput> = {}) => {
    const n = ++sequence
    return t.createUser({ name: `Fixture ${n}`, email: `fixture-${n}@example.com`, ...overrides })
  }
  const post = (owner: Someone, { token: given, ...overrides }: Partial<CreatePostInput> & Writer = {}) =>
    created<Post>(`/api/v1/users/${owner.id}/posts`, owner, given, { title: `Post ${++sequence}`, content: '.', ...overrides })

  return {
    user,
    async signedIn(overrides) {
      const made = await user(overrides)
      return { user: made, token: await token(made) }
    },
    token,
    post,
    draft: (owner, overrides = {}) => post(owner, { ...overrides, status: 'draft' }),
    comment: (on, author, { token: given, ...overrides } = {}) =>
      created<Comment>(`${postPath(on)}/comments`, author, given, { content: `Comment ${++sequence}`, ...overrides }),
    todo: (owner, { token: given, ...overrides } = {}) =>
      created<Todo>(`/api/v1/users/${owner.id}/todos`, owner, given, { text: `Todo ${++sequence}`, ...overrides }),
    album: (owner, { token: given, ...overrides } = {}) =>
      created<Album>(`/api/v1/users/${owner.id}/albums`, owner, given, { title: `Album ${++sequence}`, ...overrides }),
    photo: (album, { token: given, ...overrides } = {}) => {
      const n = ++sequence
      return created<Photo>(`${albumPath(album)}/photos`, { id: album.userId }, given, {
        title: `Photo ${n}`,
        url: `https://picsum.photos/seed/${n}/600/600`,
        thumbnailUrl: `https://picsum.photos/seed/${n}/150/150`,
        ...overrides,
      })
    },
  }
}
