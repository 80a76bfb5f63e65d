/* The compiled folder path of kagreport stats (part of the _scan module): a result file
 * read whole and decoded (read_record), a question folder's result files (list_results), a
 * dataset folder's question folders (list_questions), and a question folder graded in place
 * (grade_folder: what kagreport.grading._chunk.grade_chunk does for it, without a Python
 * object per file). Each gives None or False for anything unusual, an error included, and
 * Python does it again, raising or reporting what it must; the decoding is _scan.c's.
 *
 * tests/kag/test_scan.py and tests/grading/test_grade_in_place.py check them against the
 * Python code.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <limits.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

#include "_scan.h"

/* One buffer for every file read (the GIL is held throughout, so one caller at a time). */
static char *buffer = NULL;
static size_t buffer_size = 0;

/* Reads a regular file whole into `buffer` (NUL after it): its size, or -1 for anything
 * unusual (an error, not a regular file, a size that changed, over 1 MiB: the buffer is
 * kept for the next file): Python reads it then, and raises what it must. As read_bytes:
 * opened non-blocking (a FIFO cannot block it). `name` is relative to the folder `dir`
 * (AT_FDCWD: the working folder). */
static Py_ssize_t read_whole(int dir, const char *name)
{
    int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct stat info;
    Py_ssize_t got = -1;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size < (1 << 20)) {
        size_t want = (size_t)info.st_size + 1;  /* one more: a file that grew is seen */
        if (want + 1 > buffer_size) {
            size_t size = want + 1 > 65536 ? want + 1 : 65536;
            char *bigger = PyMem_Realloc(buffer, size);
            if (bigger != NULL) {
                buffer = bigger;
                buffer_size = size;
            }
        }
        if (want + 1 <= buffer_size) {
            ssize_t n = read(fd, buffer, want);
            if (n == info.st_size) {
                buffer[n] = '\0';
                got = n;
            }
        }
    }
    close(fd);
    return got;
}

PyObject *kagreport_read_record(PyObject *module, PyObject *path)
{
    (void)module;
    if (!PyUnicode_CheckExact(path))
        Py_RETURN_NONE;
    PyObject *name = PyUnicode_EncodeFSDefault(path);
    if (name == NULL) {
        PyErr_Clear();  /* not encodable: Python says why */
        Py_RETURN_NONE;
    }
    Py_ssize_t size = -1;
    if ((Py_ssize_t)strlen(PyBytes_AS_STRING(name)) == PyBytes_GET_SIZE(name))  /* no NUL */
        size = read_whole(AT_FDCWD, PyBytes_AS_STRING(name));
    Py_DECREF(name);
    if (size < 0)
        Py_RETURN_NONE;
    return kagreport_decode_buffer(buffer, size);
}

/* A result file name: `prefix` + a component name + ".json"; the setup's length, or -1. */
static Py_ssize_t setup_length(const char *name, size_t size, const char *prefix, size_t fixed)
{
    if (size < fixed + 6 || memcmp(name + size - 5, ".json", 5) != 0
        || memcmp(name, prefix, fixed) != 0
        || !kagreport_component_name((const unsigned char *)name + fixed, size - 5 - fixed))
        return -1;
    return (Py_ssize_t)(size - 5 - fixed);
}

typedef struct {
    char *name;
    size_t size;
    Py_ssize_t setup;  /* its length; the setup starts at name + fixed */
} Found;

static size_t sort_fixed;  /* the prefix's length, for compare_setups (GIL held) */

static int compare_setups(const void *a, const void *b)
{
    const Found *x = a, *y = b;
    size_t n = (size_t)(x->setup < y->setup ? x->setup : y->setup);
    int order = memcmp(x->name + sort_fixed, y->name + sort_fixed, n);
    return order != 0 ? order : (x->setup > y->setup) - (x->setup < y->setup);
}

static void free_found(Found *found, size_t count)
{
    for (size_t i = 0; i < count; i++)
        PyMem_Free(found[i].name);
    PyMem_Free(found);
}

/* The result files of the open folder `dir`, sorted by setup: regular files only (a link
 * is not followed), named `prefix` + a component name + ".json". 0, or -1 on any error
 * (then nothing is left to free). */
static int list_folder(DIR *dir, const char *prefix, size_t fixed, Found **out, size_t *out_count)
{
    Found *found = NULL;
    size_t count = 0, room = 0;
    int failed = 0;
    for (;;) {
        errno = 0;
        struct dirent *entry = readdir(dir);
        if (entry == NULL) {
            failed = errno != 0;
            break;
        }
        size_t size = strlen(entry->d_name);
        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
            continue;
        int regular = entry->d_type == DT_REG;
        if (entry->d_type == DT_UNKNOWN) {
            /* as DirEntry.is_file(follow_symlinks=False): an lstat, for every entry */
            struct stat info;
            if (fstatat(dirfd(dir), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
                failed = 1;
                break;
            }
            regular = S_ISREG(info.st_mode);
        }
        Py_ssize_t setup = setup_length(entry->d_name, size, prefix, fixed);
        if (!regular || setup < 0)
            continue;
        if (count == room) {
            room = room ? room * 2 : 16;
            Found *bigger = PyMem_Realloc(found, room * sizeof(Found));
            if (bigger == NULL) {
                failed = 1;
                break;
            }
            found = bigger;
        }
        found[count].name = PyMem_Malloc(size + 1);
        if (found[count].name == NULL) {
            failed = 1;
            break;
        }
        memcpy(found[count].name, entry->d_name, size + 1);
        found[count].size = size;
        found[count].setup = setup;
        count++;
    }
    if (failed) {
        free_found(found, count);
        return -1;
    }
    sort_fixed = fixed;
    qsort(found, count, sizeof(Found), compare_setups);
    *out = found;
    *out_count = count;
    return 0;
}

/* A folder and a prefix as file-system bytes; -1 (no Python error) if either cannot be
 * one: not encodable, a NUL inside, an empty folder (os.scandir("") fails). */
static int fs_names(PyObject *folder, PyObject *prefix, PyObject **folder_bytes,
                    PyObject **prefix_bytes)
{
    *folder_bytes = PyUnicode_EncodeFSDefault(folder);
    *prefix_bytes = *folder_bytes ? PyUnicode_EncodeFSDefault(prefix) : NULL;
    if (*prefix_bytes == NULL) {
        PyErr_Clear();
        Py_CLEAR(*folder_bytes);
        return -1;
    }
    const char *dir_name = PyBytes_AS_STRING(*folder_bytes);
    Py_ssize_t dir_size = PyBytes_GET_SIZE(*folder_bytes);
    if (dir_size == 0 || (Py_ssize_t)strlen(dir_name) != dir_size
        || (Py_ssize_t)strlen(PyBytes_AS_STRING(*prefix_bytes)) != PyBytes_GET_SIZE(*prefix_bytes)) {
        Py_CLEAR(*folder_bytes);
        Py_CLEAR(*prefix_bytes);
        return -1;
    }
    return 0;
}

/* The result files of one question folder, as kagreport.kag._walk.result_files gives them
 * from LocalTree.list_dir: (setup, path, "") sorted by setup, regular files only (a link
 * is not followed). None on any error (Python lists it again, and raises what it must). */
PyObject *kagreport_list_results(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *folder, *prefix, *folder_bytes, *prefix_bytes;
    if (!PyArg_ParseTuple(args, "UU", &folder, &prefix))
        return NULL;
    if (fs_names(folder, prefix, &folder_bytes, &prefix_bytes) < 0)
        Py_RETURN_NONE;
    const char *dir_name = PyBytes_AS_STRING(folder_bytes);
    size_t dir_size = (size_t)PyBytes_GET_SIZE(folder_bytes);
    size_t fixed = (size_t)PyBytes_GET_SIZE(prefix_bytes);
    Found *found = NULL;
    size_t count = 0;
    DIR *dir = opendir(dir_name);
    int failed = dir == NULL || list_folder(dir, PyBytes_AS_STRING(prefix_bytes), fixed, &found,
                                            &count) < 0;
    if (dir != NULL)
        closedir(dir);
    PyObject *out = NULL;
    if (!failed) {
        /* LocalTree.join: the folder, a '/' unless it is empty or ends with one, the name */
        PyObject *base = folder;
        Py_INCREF(base);
        if (dir_name[dir_size - 1] != '/') {
            Py_SETREF(base, PyUnicode_FromFormat("%U/", folder));
        }
        out = base ? PyList_New((Py_ssize_t)count) : NULL;
        for (size_t i = 0; out != NULL && i < count; i++) {
            PyObject *name = PyUnicode_DecodeFSDefaultAndSize(found[i].name, found[i].size);
            PyObject *path = name ? PyUnicode_Concat(base, name) : NULL;
            PyObject *setup = PyUnicode_DecodeASCII(found[i].name + fixed, found[i].setup, NULL);
            PyObject *item = path && setup ? PyTuple_Pack(3, setup, path, kagreport_empty_text) : NULL;
            Py_XDECREF(name);
            Py_XDECREF(path);
            Py_XDECREF(setup);
            if (item == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, (Py_ssize_t)i, item);
        }
        Py_XDECREF(base);
        free_found(found, count);
    }
    Py_DECREF(folder_bytes);
    Py_DECREF(prefix_bytes);
    if (out == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return out;
}

/* The question folders of one dataset folder, as kagreport.kag._walk.iter_question_dirs
 * takes them from LocalTree.list_dir: the names of its folders (a link is not followed),
 * sorted; other entries skipped. None on any error, or where a folder's name is not a valid
 * component name (Python lists it again, and warns about the name). */
PyObject *kagreport_list_questions(PyObject *module, PyObject *folder)
{
    (void)module;
    PyObject *folder_bytes, *prefix_bytes;
    if (!PyUnicode_Check(folder) || fs_names(folder, kagreport_empty_text, &folder_bytes, &prefix_bytes) < 0)
        Py_RETURN_NONE;
    Py_DECREF(prefix_bytes);
    DIR *dir = opendir(PyBytes_AS_STRING(folder_bytes));
    Py_DECREF(folder_bytes);
    if (dir == NULL)
        Py_RETURN_NONE;
    PyObject *names = PyList_New(0);
    int failed = names == NULL;
    while (!failed) {
        errno = 0;
        struct dirent *entry = readdir(dir);
        if (entry == NULL) {
            failed = errno != 0;
            break;
        }
        const char *name = entry->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        int is_dir = entry->d_type == DT_DIR;
        if (entry->d_type == DT_UNKNOWN) {
            struct stat info;
            if (fstatat(dirfd(dir), name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
                failed = 1;
                break;
            }
            is_dir = S_ISDIR(info.st_mode);
        }
        if (!is_dir)
            continue;
        size_t size = strlen(name);
        /* anything but a component name is Python's to warn about */
        if (!kagreport_component_name((const unsigned char *)name, size)) {
            failed = 1;
            break;
        }
        PyObject *text = PyUnicode_DecodeASCII(name, (Py_ssize_t)size, NULL);
        failed = text == NULL || PyList_Append(names, text) < 0;
        Py_XDECREF(text);
    }
    closedir(dir);
    if (!failed && PyList_Sort(names) == 0)
        return names;
    Py_XDECREF(names);
    PyErr_Clear();
    Py_RETURN_NONE;
}

/* Unicode White_Space at the start of p (UTF-8, checked): its size in bytes, 0 if none.
 * The characters Rust's str::trim removes (kagreport.grading._rule.WHITE_SPACE). */
static inline int space_at(const unsigned char *p, const unsigned char *end)
{
    unsigned char b = p[0];
    if (b == ' ' || (b >= 0x09 && b <= 0x0D))
        return 1;
    if (b == 0xC2 && end - p >= 2)
        return p[1] == 0x85 || p[1] == 0xA0 ? 2 : 0;
    if (end - p < 3)
        return 0;
    if (b == 0xE1)
        return p[1] == 0x9A && p[2] == 0x80 ? 3 : 0;  /* U+1680 */
    if (b == 0xE2 && p[1] == 0x80)  /* U+2000..U+200A, U+2028, U+2029, U+202F */
        return p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF ? 3 : 0;
    if (b == 0xE2)
        return p[1] == 0x81 && p[2] == 0x9F ? 3 : 0;  /* U+205F */
    if (b == 0xE3)
        return p[1] == 0x80 && p[2] == 0x80 ? 3 : 0;  /* U+3000 */
    return 0;
}

/* White_Space at the end of [start, end): its size in bytes, 0 if none. The text is valid
 * UTF-8, so a space's last two or three bytes cannot be the tail of another character. */
static inline int space_before(const unsigned char *start, const unsigned char *end)
{
    Py_ssize_t left = end - start;
    if (left >= 1 && space_at(end - 1, end) == 1)
        return 1;
    if (left >= 2 && end[-2] == 0xC2 && space_at(end - 2, end) == 2)
        return 2;
    if (left >= 3 && (end[-3] & 0xF0) == 0xE0 && space_at(end - 3, end) == 3)
        return 3;
    return 0;
}

/* kag's rule (kagreport.grading._rule.grade_response) on UTF-8: the response trimmed of
 * White_Space at both ends equals the answer ignoring ASCII case. On UTF-8 bytes that is
 * one comparison: ASCII folding keeps every other byte, so equal bytes mean equal lengths
 * in characters too. */
static int selects(const unsigned char *p, const unsigned char *end, const char *answer,
                   Py_ssize_t answer_size)
{
    int n;
    while (p < end && (n = space_at(p, end)) > 0)
        p += n;
    while (end > p && (n = space_before(p, end)) > 0)
        end -= n;
    if (end - p != answer_size)
        return 0;
    for (Py_ssize_t i = 0; i < answer_size; i++) {
        unsigned char a = p[i], b = (unsigned char)answer[i];
        if (a != b && ((a | 0x20) != (b | 0x20) || (unsigned char)((a | 0x20) - 'a') > 25))
            return 0;
    }
    return 1;
}

/* One file graded in place: outcome 0 correct, 1 wrong, 2 an error envelope; then the
 * measurements (-1: absent), as grade_chunk keeps them. */
typedef struct {
    unsigned char outcome;
    long long values[6];  /* generation ns, retrieval ns, vertices, relationships,
                             properties, context bytes */
} Graded;

static int grade_buffer(const char *data, Py_ssize_t size, const char *answer,
                        Py_ssize_t answer_size, Graded *out)
{
    Ok ok;
    memset(&ok, 0, sizeof ok);
    int kind = kagreport_scan_envelope(data, size, &ok, NULL);
    if (kind < 0)
        return -1;
    for (int k = 0; k < 6; k++)
        out->values[k] = -1;
    if (kind == 2) {
        out->outcome = 2;
        return 0;
    }
    const Str *r = &ok.result_span;
    int correct;
    if (!r->escaped) {
        correct = selects(r->start, r->start + r->raw, answer, answer_size);
    } else {
        char *text = PyMem_Malloc(r->utf8 + 1);
        if (text == NULL)
            return -1;
        char *text_end = kagreport_unescape(r, text);
        correct = selects((unsigned char *)text, (unsigned char *)text_end, answer, answer_size);
        PyMem_Free(text);
    }
    out->outcome = correct ? 0 : 1;
    out->values[0] = ok.generation_ns;
    out->values[5] = ok.context_bytes;
    if (ok.has_retrieval) {
        out->values[1] = ok.retrieval_ns;
        out->values[2] = ok.vertices;
        out->values[3] = ok.relationships;
        out->values[4] = ok.properties;
    }
    return 0;
}

/* sums[k] += value: a list of Python ints, exact whatever the size. */
static int add_to(PyObject *sums, Py_ssize_t k, long long value)
{
    PyObject *item = PyList_GET_ITEM(sums, k);
    int overflow = 0;
    long long now = PyLong_AsLongLongAndOverflow(item, &overflow);
    long long total;
    PyObject *updated;
    if (!overflow && !(now == -1 && PyErr_Occurred()) && !__builtin_add_overflow(now, value, &total)) {
        updated = PyLong_FromLongLong(total);
    } else {
        PyErr_Clear();
        PyObject *addend = PyLong_FromLongLong(value);
        updated = addend ? PyNumber_Add(item, addend) : NULL;
        Py_XDECREF(addend);
    }
    if (updated == NULL)
        return -1;
    PyList_SetItem(sums, k, updated);  /* steals updated, releases the old item */
    return 0;
}

static int append_bytes(PyObject *array, const void *data, Py_ssize_t size)
{
    Py_ssize_t at = PyByteArray_GET_SIZE(array);
    if (PyByteArray_Resize(array, at + size) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(array) + at, data, (size_t)size);
    return 0;
}

/* The group sums of one graded file, as grade_chunk adds them (kagreport.grading._chunk). */
static int add_sums(PyObject *sums, const Graded *g)
{
    if (g->outcome == 2)
        return add_to(sums, 2, 1);
    const long long *v = g->values;
    if (add_to(sums, g->outcome, 1) < 0 || add_to(sums, 3, v[0]) < 0 || add_to(sums, 4, 1) < 0
        || add_to(sums, 5, v[5]) < 0)
        return -1;
    if (v[1] < 0)
        return 0;
    for (int k = 0; k < 4; k++)
        if (add_to(sums, 6 + k, v[1 + k]) < 0)
            return -1;
    return add_to(sums, 10, 1);
}

/* The state grade_folder adds to: grade_chunk's setups, their codes and the group sums,
 * then bytearrays of the rows (uint32 folder index, uint32 setup code) and the columns
 * (uint8 outcome, six int64 measurements), in native byte order (array.frombytes). */
enum { STATE_SETUPS, STATE_CODES, STATE_SUMS, STATE_FOLDER, STATE_SETUP, STATE_OUTCOME,
       STATE_VALUES, STATE_SIZE = STATE_VALUES + 6 };

static int commit(PyObject **state, const Found *found, size_t count, size_t fixed,
                  const Graded *graded, long dataset, uint32_t index)
{
    PyObject *setups = state[STATE_SETUPS], *codes = state[STATE_CODES];
    for (size_t i = 0; i < count; i++) {
        PyObject *name = PyUnicode_DecodeASCII(found[i].name + fixed, found[i].setup, NULL);
        if (name == NULL)
            return -1;
        PyObject *code = PyDict_GetItemWithError(codes, name);  /* borrowed */
        if (code == NULL) {
            if (PyErr_Occurred())
                goto fail;
            code = PyLong_FromSsize_t(PyList_GET_SIZE(setups));
            int added = code == NULL ? -1 : PyDict_SetItem(codes, name, code);
            Py_XDECREF(code);  /* the dict holds it */
            if (added < 0 || PyList_Append(setups, name) < 0)
                goto fail;
        }
        uint32_t setup = (uint32_t)PyLong_AsUnsignedLong(code);
        PyObject *key = Py_BuildValue("(kl)", (unsigned long)setup, dataset);
        if (key == NULL)
            goto fail;
        PyObject *sums = PyDict_GetItemWithError(state[STATE_SUMS], key);  /* borrowed */
        if (sums == NULL && !PyErr_Occurred()) {
            sums = PyList_New(11);
            for (int k = 0; sums != NULL && k < 11; k++)
                PyList_SET_ITEM(sums, k, PyLong_FromLong(0));
            if (sums != NULL && PyDict_SetItem(state[STATE_SUMS], key, sums) < 0)
                Py_CLEAR(sums);
            Py_XDECREF(sums);  /* the dict holds it */
        }
        Py_DECREF(key);
        if (sums == NULL || add_sums(sums, &graded[i]) < 0)
            goto fail;
        if (append_bytes(state[STATE_FOLDER], &index, 4) < 0
            || append_bytes(state[STATE_SETUP], &setup, 4) < 0
            || append_bytes(state[STATE_OUTCOME], &graded[i].outcome, 1) < 0)
            goto fail;
        for (int k = 0; k < 6; k++)
            if (append_bytes(state[STATE_VALUES + k], &graded[i].values[k], 8) < 0)
                goto fail;
        Py_DECREF(name);
        continue;
    fail:
        Py_DECREF(name);
        return -1;
    }
    return 0;
}

/* grade_folder(folder, prefix, answer, dataset, index, state) -> bool: list one question
 * folder, read each result file (relative to the open folder), decode and grade it in
 * place, and add the folder to `state` (see STATE_*). All or nothing: False, with nothing
 * added, where any part is unusual (a file not in kag's common shape, an error, a folder
 * that cannot be listed): grade_chunk then does the folder in Python, which raises or
 * reports what it must. */
PyObject *kagreport_grade_folder(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *folder, *prefix, *state_tuple, *folder_bytes, *prefix_bytes;
    const char *answer;
    Py_ssize_t answer_size;
    long dataset;
    unsigned long index;
    if (!PyArg_ParseTuple(args, "UUy#lkO!", &folder, &prefix, &answer, &answer_size, &dataset,
                          &index, &PyTuple_Type, &state_tuple))
        return NULL;
    if (PyTuple_GET_SIZE(state_tuple) != STATE_SIZE) {
        PyErr_SetString(PyExc_TypeError, "grade_folder() takes a state of 13 items");
        return NULL;
    }
    PyObject **state = &PyTuple_GET_ITEM(state_tuple, 0);
    if (!PyList_CheckExact(state[STATE_SETUPS]) || !PyDict_CheckExact(state[STATE_CODES])
        || !PyDict_CheckExact(state[STATE_SUMS])) {
        PyErr_SetString(PyExc_TypeError, "grade_folder(): a state of a list and two dicts first");
        return NULL;
    }
    for (int k = STATE_FOLDER; k < STATE_SIZE; k++)
        if (!PyByteArray_CheckExact(state[k])) {
            PyErr_SetString(PyExc_TypeError, "grade_folder(): bytearrays after the dicts");
            return NULL;
        }
    if (fs_names(folder, prefix, &folder_bytes, &prefix_bytes) < 0)
        Py_RETURN_FALSE;
    size_t fixed = (size_t)PyBytes_GET_SIZE(prefix_bytes);
    Found *found = NULL;
    size_t count = 0;
    Graded *graded = NULL;
    DIR *dir = opendir(PyBytes_AS_STRING(folder_bytes));
    int usual = dir != NULL
                && list_folder(dir, PyBytes_AS_STRING(prefix_bytes), fixed, &found, &count) == 0;
    if (usual && count > 0) {
        graded = PyMem_Malloc(count * sizeof(Graded));
        usual = graded != NULL;
    }
    /* The path Python would open (LocalTree.join): one the system refuses as too long is
     * refused there, not read here relative to the open folder. */
    size_t folder_size = (size_t)PyBytes_GET_SIZE(folder_bytes);
    size_t joined = folder_size + (PyBytes_AS_STRING(folder_bytes)[folder_size - 1] != '/');
    int interrupted = 0;
    for (size_t i = 0; usual && i < count; i++) {
        /* A stop handler runs between files: a folder may hold thousands. */
        if (PyErr_CheckSignals() < 0) {
            interrupted = 1;
            break;
        }
        if (joined + found[i].size >= PATH_MAX) {
            usual = 0;
            break;
        }
        Py_ssize_t size = read_whole(dirfd(dir), found[i].name);
        usual = size >= 0 && grade_buffer(buffer, size, answer, answer_size, &graded[i]) == 0;
    }
    if (dir != NULL)
        closedir(dir);
    int committed = usual && !interrupted
                        ? commit(state, found, count, fixed, graded, dataset, (uint32_t)index)
                        : interrupted ? -1 : 0;
    free_found(found, count);
    PyMem_Free(graded);
    Py_DECREF(folder_bytes);
    Py_DECREF(prefix_bytes);
    if (committed < 0)
        return NULL;
    if (PyErr_Occurred())
        PyErr_Clear();  /* a record the scanner declined: Python decides */
    return PyBool_FromLong(usual);
}
