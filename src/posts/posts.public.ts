// What other features may use of posts: the item schema, the service's type, and the rules of who
// sees a draft — to load a post a caller may see, or to join posts in another feature's query. The
// lint refuses other features' imports of anything else in this folder.
export { Post } from './posts.schemas.js'
export { draftVisibility, loadVisiblePost, loadVisiblePostId, mayRead, toPost, type PostsService } from './posts.service.js'
export { ANONYMOUS_VISIBILITY, type DraftVisibility, visibilityShape, visible } from './post-visibility.js'
export { postReference } from './posts.graphql.js'
export type { PostRow } from './posts.table.js'
