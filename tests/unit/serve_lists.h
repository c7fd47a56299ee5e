/*
 * serve_lists: for the controller's tests on the scriptable fake API
 * (kube/fake.h): the lists every controller reads that these tests leave
 * empty.  Include after cmocka.h.
 */
#ifndef KERF_TESTS_SERVE_LISTS_H
#define KERF_TESTS_SERVE_LISTS_H

#include "kube/fake.h"

/* The PriorityClasses, PodDisruptionBudgets and GPUPools: none. */
static void script_empty_lists(struct kerf_kube_fake *f)
{
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/apis/kerf.io/v1alpha1/gpupools", 200,
		"{\"kind\":\"GPUPoolList\",\"apiVersion\":\"kerf.io/v1alpha1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}"), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/apis/scheduling.k8s.io/v1/priorityclasses", 200,
		"{\"kind\":\"PriorityClassList\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}"), 0);
	assert_int_equal(kerf_kube_fake_push_answer(f, "GET", "/apis/policy/v1/poddisruptionbudgets", 200,
		"{\"kind\":\"PodDisruptionBudgetList\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"resourceVersion\":\"100\"},\"items\":[]}"), 0);
}

#endif
