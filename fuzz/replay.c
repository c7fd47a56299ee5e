/*
 * replay: runs a fuzz target's LLVMFuzzerTestOneInput over files, without
 * libFuzzer, so that a corpus replays under gcc and the test suite's
 * sanitizers.  Arguments are files or directories (every regular file in a
 * directory, in name order, not recursing).  Each input is copied into a
 * buffer of exactly its size, as libFuzzer does, so that a read past the
 * end is an AddressSanitizer report.  A property the target checks aborts.
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/err.h"
#include "format/file.h"

enum { REPLAY_MAX_BYTES = 16 << 20 };

static int replay_file(const char *path)
{
	struct kerf_file f;
	struct kerf_err err = { 0 };
	uint8_t *copy;
	size_t len;

	if (kerf_file_read(&f, path, REPLAY_MAX_BYTES, &err) < 0) {
		fprintf(stderr, "replay: %s\n", err.msg);
		return -1;
	}
	len = f.len;
	copy = malloc(len ? len : 1);
	if (!copy) {
		kerf_file_release(&f);
		fprintf(stderr, "replay: out of memory\n");
		return -1;
	}
	memcpy(copy, f.data, len);
	kerf_file_release(&f);
	LLVMFuzzerTestOneInput(copy, len);
	free(copy);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, sorted; returns the count replayed or -1. */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, alloc = 0;
	int count = 0;

	if (!d) {
		fprintf(stderr, "replay: cannot open directory '%s'\n", dir);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t size = strlen(dir) + strlen(de->d_name) + 2;

		if (de->d_name[0] == '.')
			continue;
		if (nr == alloc) {
			size_t want = alloc ? alloc * 2 : 64;
			char **grown = realloc(names, want * sizeof(*names));

			if (!grown) {
				count = -1;
				break;
			}
			names = grown;
			alloc = want;
		}
		names[nr] = malloc(size);
		if (!names[nr]) {
			count = -1;
			break;
		}
		snprintf(names[nr], size, "%s/%s", dir, de->d_name);
		nr++;
	}
	closedir(d);
	if (count < 0)
		fprintf(stderr, "replay: out of memory listing '%s'\n", dir);
	if (nr > 0)
		qsort(names, nr, sizeof(*names), name_cmp);
	for (size_t i = 0; i < nr; i++) {
		struct stat st;

		if (count >= 0 && stat(names[i], &st) == 0 &&
		    S_ISREG(st.st_mode))
			count = replay_file(names[i]) < 0 ? -1 : count + 1;
		free(names[i]);
	}
	free(names);
	return count;
}

int main(int argc, char **argv)
{
	int total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int n;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: cannot stat '%s'\n", argv[i]);
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i])
					: (replay_file(argv[i]) < 0 ? -1 : 1);
		if (n < 0)
			return 1;
		total += n;
	}
	if (total == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	printf("replay: %d inputs ran clean\n", total);
	return 0;
}
