/* What the sources of the _scan module (kagreport/kag/_scan*.c) give each other. */
#ifndef KAGREPORT_SCAN_H
#define KAGREPORT_SCAN_H

#include <Python.h>

/* A string field read in place: its bytes between the quotes and its decoded size. */
typedef struct {
    const unsigned char *start;
    Py_ssize_t raw;      /* bytes between the quotes */
    Py_ssize_t utf8;     /* UTF-8 bytes once decoded (the Python len(s.encode())) */
    int escaped;
} Str;

/* What a success record carries back (NULL: not seen yet). With `objects` 0 (grading in
 * place) no Python object is made: the response is left as its span, `result_span`. */
typedef struct {
    PyObject *result, *provider, *model, *context;
    long long generation_ns, context_bytes;
    long long retrieval_ns, vertices, relationships, properties;
    int has_retrieval;
    int objects;
    Str result_span;
} Ok;

/* kag's ComponentName (src/cli/component.rs): non-empty, a-z, 0-9 and '-' only. */
static inline int kagreport_component_name(const unsigned char *name, size_t size)
{
    if (size == 0)
        return 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char b = name[i];
        if (!((b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') || b == '-'))
            return 0;
    }
    return 1;
}

/* _scan.c: the decoder. */
extern PyObject *kagreport_empty_text;  /* "" */
/* The envelope: 1 for a success (`ok` filled), 2 for an error, -1 if not the fast path's. */
int kagreport_scan_envelope(const char *data, Py_ssize_t size, Ok *ok, PyObject **error);
/* A ResultRecord, or None for the Python decoder to decide. */
PyObject *kagreport_decode_buffer(const char *data, Py_ssize_t size);
/* The UTF-8 of a scanned escaped string, written to `buffer` (s->utf8 bytes): its end. */
char *kagreport_unescape(const Str *s, char *buffer);

/* _scan_folder.c: the module's folder functions. */
PyObject *kagreport_read_record(PyObject *module, PyObject *path);
PyObject *kagreport_list_results(PyObject *module, PyObject *args);
PyObject *kagreport_list_questions(PyObject *module, PyObject *folder);
PyObject *kagreport_grade_folder(PyObject *module, PyObject *args);

/* _scan_datasets.c: datasets_structure(data) -> (depth, fields, names) | None. */
PyObject *kagreport_datasets_structure(PyObject *module, PyObject *data);

#endif
