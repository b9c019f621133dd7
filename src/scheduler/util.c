/*-------------------------------------------------------------------------
 *
 * util.c
 *		Memory arena, merge sort and binary heap for the scheduling core.
 *
 * The core may not call malloc or use qsort (<stdlib.h> is not among the
 * headers it is allowed), so it carries these three small tools.  All
 * memory comes from the caller's FsAllocator; the arena gives it back in
 * one sweep at the end of a pass (or leaves it to the caller's own arena
 * when the allocator has no free function).
 *
 * Never include a PostgreSQL header here.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "internal.h"

/* Chunks are at least this big, so a pass makes few calls to the allocator. */
#define FS_ARENA_CHUNK	(64 * 1024)
#define FS_ALIGN(n)		(((n) + 15) & ~(size_t) 15)

struct FsArenaChunk
{
	FsArenaChunk *next;
	size_t		size;
	size_t		used;
	/* the memory follows, 16-byte aligned */
};

#define FS_CHUNK_HEADER FS_ALIGN(sizeof(FsArenaChunk))

void
fs_arena_init(FsArena *arena, const FsAllocator *allocator)
{
	arena->allocator = allocator;
	arena->chunks = NULL;
}

void *
fs_arena_alloc(FsArena *arena, size_t size)
{
	FsArenaChunk *chunk = arena->chunks;
	char	   *p;

	size = FS_ALIGN(size ? size : 1);
	if (chunk == NULL || chunk->size - chunk->used < size)
	{
		size_t		want = size > FS_ARENA_CHUNK ? size : FS_ARENA_CHUNK;

		chunk = arena->allocator->alloc(arena->allocator->ctx, FS_CHUNK_HEADER + want);
		chunk->size = want;
		chunk->used = 0;
		/* A big private chunk goes behind the current one, which keeps its room. */
		if (arena->chunks != NULL && want == size && size > FS_ARENA_CHUNK)
		{
			chunk->next = arena->chunks->next;
			arena->chunks->next = chunk;
		}
		else
		{
			chunk->next = arena->chunks;
			arena->chunks = chunk;
		}
	}
	p = (char *) chunk + FS_CHUNK_HEADER + chunk->used;
	chunk->used += size;
	memset(p, 0, size);
	return p;
}

void
fs_arena_release(FsArena *arena)
{
	FsArenaChunk *chunk = arena->chunks;

	if (arena->allocator->free != NULL)
	{
		while (chunk != NULL)
		{
			FsArenaChunk *next = chunk->next;

			arena->allocator->free(arena->allocator->ctx, chunk);
			chunk = next;
		}
	}
	arena->chunks = NULL;
}

void *
fs_alloc_zero(const FsAllocator *allocator, size_t size)
{
	void	   *p = allocator->alloc(allocator->ctx, size ? size : 1);

	memset(p, 0, size ? size : 1);
	return p;
}

/*
 * Stable merge sort.  Runs are usually already in order (the wrapper reads
 * jobs through an index in share order), so check that first: a sorted run
 * costs one comparison per element and no copying.
 */
static void
merge_sort(char *a, char *tmp, int n, size_t size, FsCompare cmp, const void *ctx)
{
	int			mid;
	int			i,
				j,
				k;

	if (n < 2)
		return;
	if (n <= 8)
	{
		/* insertion sort, via tmp as the one-element buffer */
		for (i = 1; i < n; i++)
		{
			j = i;
			memcpy(tmp, a + i * size, size);
			while (j > 0 && cmp(a + (j - 1) * size, tmp, ctx) > 0)
			{
				memcpy(a + j * size, a + (j - 1) * size, size);
				j--;
			}
			memcpy(a + j * size, tmp, size);
		}
		return;
	}
	mid = n / 2;
	merge_sort(a, tmp, mid, size, cmp, ctx);
	merge_sort(a + mid * size, tmp, n - mid, size, cmp, ctx);
	if (cmp(a + (mid - 1) * size, a + mid * size, ctx) <= 0)
		return;
	memcpy(tmp, a, (size_t) n * size);
	i = 0;
	j = mid;
	k = 0;
	while (i < mid && j < n)
	{
		if (cmp(tmp + j * size, tmp + i * size, ctx) < 0)
			memcpy(a + (k++) * size, tmp + (j++) * size, size);
		else
			memcpy(a + (k++) * size, tmp + (i++) * size, size);
	}
	while (i < mid)
		memcpy(a + (k++) * size, tmp + (i++) * size, size);
	while (j < n)
		memcpy(a + (k++) * size, tmp + (j++) * size, size);
}

void
fs_sort(void *base, int n, size_t size, FsCompare cmp, const void *ctx, FsArena *arena)
{
	char	   *a = base;
	int			i;

	for (i = 1; i < n; i++)
		if (cmp(a + (i - 1) * size, a + i * size, ctx) > 0)
			break;
	if (i >= n)
		return;					/* already in order */
	merge_sort(a, fs_arena_alloc(arena, (size_t) n * size), n, size, cmp, ctx);
}

void
fs_heap_init(FsHeap *heap, int capacity, FsBefore before, const void *ctx, FsArena *arena)
{
	heap->items = fs_arena_alloc(arena, sizeof(int) * (size_t) (capacity > 0 ? capacity : 1));
	heap->n = 0;
	heap->before = before;
	heap->ctx = ctx;
}

void
fs_heap_push(FsHeap *heap, int item)
{
	int			i = heap->n++;

	while (i > 0)
	{
		int			parent = (i - 1) / 2;

		if (!heap->before(heap->ctx, item, heap->items[parent]))
			break;
		heap->items[i] = heap->items[parent];
		i = parent;
	}
	heap->items[i] = item;
}

/*
 * Move item `last' down from the root into place among the first heap->n
 * items (the root's slot is free).
 */
static void
sift_down(FsHeap *heap, int last)
{
	int			i = 0;

	for (;;)
	{
		int			child = 2 * i + 1;

		if (child >= heap->n)
			break;
		if (child + 1 < heap->n &&
			heap->before(heap->ctx, heap->items[child + 1], heap->items[child]))
			child++;
		if (!heap->before(heap->ctx, heap->items[child], last))
			break;
		heap->items[i] = heap->items[child];
		i = child;
	}
	if (heap->n > 0)
		heap->items[i] = last;
}

int
fs_heap_pop(FsHeap *heap)
{
	int			top = heap->items[0];

	heap->n--;
	sift_down(heap, heap->items[heap->n]);
	return top;
}

/*
 * The top item now goes later than it did (its key grew): move it into
 * place.  Half the work of popping it and pushing it again.
 */
void
fs_heap_sift_top(FsHeap *heap)
{
	sift_down(heap, heap->items[0]);
}
