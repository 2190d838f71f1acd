package kube

// PinnedNodes lets the external tests read where a Job's pods are pinned as the backend does.
var PinnedNodes = pinnedNodes
