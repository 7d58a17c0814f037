# shellcheck shell=bash
# What tests/kernels/run and guest-suite read of the TAP streams they
# relay.

# tap_result LINE: an "ok N - desc" or "not ok N - desc" line's status
# in st, its description in desc
# shellcheck disable=SC2034 # st and desc are its callers'
tap_result() {
	st=${1%%ok *}ok desc=${1#*ok }
	desc=${desc#[0-9]*[ ]} desc=${desc#- }
}
