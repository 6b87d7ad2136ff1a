// The lint's structure rules (eslint.config.js `boundaries`), shown on planted files: a feature that
// reaches into another's internals, a shared layer that imports a feature, and a feature module
// missing from src/features.ts are each an error; what the rules allow passes. Checked with
// ESLint's Linter on the planted text alone (the rules need no type information), under the
// project's own rule blocks, whose lists are read from the tree and src/features.ts.
import { join, resolve } from 'node:path'
import { Linter } from 'eslint'
import tseslint from 'typescript-eslint'
import { describe, expect, it } from 'vitest'
import { boundaries } from '../../eslint.config.js'
import { featureFolders, registeredFeatures } from '../../scripts/features.js'
import { FEATURES } from '../../src/features.js'

// Paths from the project's root, whatever the process's working directory (files share a worker).
const ROOT = resolve(import.meta.dirname, '../..')
const linter = new Linter({ configType: 'flat', cwd: ROOT })
const config = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...boundaries]

/** The structure errors of `code` as if it were the file `filename`. */
const errorsOf = (filename: string, code: string) => linter.verify(code, config, join(ROOT, filename)).map(({ ruleId, message }) => ({ ruleId, message }))

describe('the structure rules', () => {
  it('read the features from src/features.ts, and every feature folder is registered', () => {
    // The lint's static reading of src/features.ts agrees with the registry the app runs on.
    expect(registeredFeatures(ROOT)).toEqual(FEATURES.map(({ name }) => name))
    expect([...featureFolders(ROOT)].sort()).toEqual([...registeredFeatures(ROOT)].sort())
  })

  it.each([
    ['a service', `import { loadUser } from '../users/users.service.js'`],
    ['a repository', `import * as repo from '../posts/posts.repository.js'`],
    ['a schema module', `import { Post } from '../posts/posts.schemas.js'`],
    ['the routes', `import { usersRoutes } from '../users/users.routes.js'`],
  ])("refuse a feature's reach into another's %s", (_what, code) => {
    expect(errorsOf('src/todos/planted.ts', code)).toEqual([
      expect.objectContaining({ ruleId: 'no-restricted-imports', message: expect.stringContaining('public module') }),
    ])
  })

  it("allow another feature's public module and feature module, and the feature's own files", () => {
    expect(errorsOf('src/comments/planted.ts', `import { loadVisiblePost } from '../posts/posts.public.js'`)).toEqual([])
    expect(errorsOf('src/comments/planted.ts', `import { usersFeature } from '../users/users.feature.js'`)).toEqual([])
    expect(errorsOf('src/comments/planted.ts', `import * as repo from './comments.repository.js'`)).toEqual([])
  })

  it('refuse the composition root in a feature', () => {
    expect(errorsOf('src/todos/planted.ts', `import { FEATURES } from '../features.js'`)).toEqual([
      expect.objectContaining({ ruleId: 'no-restricted-imports' }),
    ])
  })

  it.each([
    ['src/http/planted.ts', `import type { UsersService } from '../users/users.public.js'`],
    ['src/graphql/subscriptions/planted.ts', `import { commentsFeature } from '../../comments/comments.feature.js'`],
    ['src/db/planted.ts', `import { FEATURES } from '../features.js'`],
  ])('refuse a feature in a shared layer (%s)', (filename, code) => {
    expect(errorsOf(filename, code)).toEqual([expect.objectContaining({ ruleId: 'no-restricted-imports', message: expect.stringContaining('shared layer') })])
  })

  it('refuse a feature module that src/features.ts does not register', () => {
    expect(errorsOf('src/bookmarks/bookmarks.feature.ts', 'export const bookmarksFeature = {}')).toEqual([
      { ruleId: 'structure/registered-feature', message: expect.stringContaining("'bookmarks' is not in src/features.ts") },
    ])
    expect(errorsOf('src/users/users.feature.ts', 'export const usersFeature = {}')).toEqual([])
  })
})
