/* What the sources of the _scan module (kagreport/kag/_scan*.c) give each other. */
#ifndef KAGREPORT_SCAN_H
#define KAGREPORT_SCAN_H

#include <Python.h>

/* _scan_datasets.c: datasets_structure(data) -> (depth, fields, names) | None. */
PyObject *kagreport_datasets_structure(PyObject *module, PyObject *data);

#endif
