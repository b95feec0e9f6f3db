#!/usr/bin/env bash
# Puts sitegen check's report on a pull request as one comment: the first
# run creates it, every later push edits that same comment, so a pull
# request never collects one comment per push. Used by action.yml.
#
#   GITHUB_TOKEN=... pr-comment.sh API_URL OWNER/REPO PR_NUMBER REPORT.md
#
# The comment is found by the marker on its first line. Needs curl and jq
# (both on GitHub's hosted runners).
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: GITHUB_TOKEN=... $0 API_URL OWNER/REPO PR_NUMBER REPORT.md" >&2
  exit 64
fi
api="${1%/}" repo="$2" pr="$3" report="$4"
: "${GITHUB_TOKEN:?GITHUB_TOKEN is not set: the comment step needs a token with pull-requests: write}"
marker='<!-- sitegen-check -->'
# GitHub refuses a comment body over 65,536 characters.
limit=60000

api_call() {
  curl --silent --show-error --fail-with-body --retry 2 \
    -H "Authorization: Bearer $GITHUB_TOKEN" \
    -H "Accept: application/vnd.github+json" \
    -H "X-GitHub-Api-Version: 2022-11-28" \
    "$@"
}

body="$(jq --raw-input --slurp --arg marker "$marker" --argjson limit "$limit" '
  {body: ($marker + "\n" + (if length > $limit
    then .[:$limit] + "\n\n… (cut short: the whole report is in the job summary)\n"
    else . end))}' "$report")"

# The comment from an earlier push, looked for page by page.
id=""
page=1
while :; do
  comments="$(api_call "$api/repos/$repo/issues/$pr/comments?per_page=100&page=$page")"
  id="$(jq -r --arg marker "$marker" \
    'map(select(.body // "" | startswith($marker))) | first | .id // empty' <<<"$comments")"
  if [ -n "$id" ] || [ "$(jq length <<<"$comments")" -lt 100 ]; then
    break
  fi
  page=$((page + 1))
done

if [ -n "$id" ]; then
  api_call -X PATCH "$api/repos/$repo/issues/comments/$id" --data "$body" >/dev/null
  echo "updated the sitegen comment on pull request #$pr (comment $id)"
else
  api_call -X POST "$api/repos/$repo/issues/$pr/comments" --data "$body" >/dev/null
  echo "commented on pull request #$pr"
fi
