# The arena's texts in English. Every message here is in ../sk/arena.ftl too, with the same
# variables (a unit test holds them to it). docs/arena.md, "Languages", says how to add one.

language-name = English

## The header

nav-board = leaderboard
nav-final = final
nav-results = results
nav-rules = rules
nav-me = your submission
nav-org = organisers
nav-signout = sign out
nav-signin = sign in
nav-language = Language

## Phases

phase-before = Sign-in opens at { $at }.
phase-registration = Registration: uploads open at { $at }.
phase-testing = Testing: upload until { $deadline } (the last upload counts).
phase-closed = The deadline has passed ({ $deadline }); the final is at { $final }.
phase-final = The final.

## The competition's page

home-registration = Registration
home-testing = Testing opens
home-deadline = Deadline (last upload)
home-final = Live final
home-me = Your submission
home-board = the leaderboard
home-signin = Sign in with your e-mail address
home-signin-why = to upload an agent.
home-phases = Phases
home-note = Times in { $zone }. The leaderboard plays each submission once against the Council on the reference map; the top eight meet in the live final.
home-rules = The rules of the competition

## The rules

rules-title = Rules
rules-note = The organisers' rules of the competition.
rules-none = This competition has no rules page: ask its organisers.

## Signing in

signin-title = Sign in
signin-identity = Your e-mail address is your identity: a link to sign in is sent to it.
signin-address = E-mail address
signin-send = Send the link
signin-check = Check your e-mail
signin-sent = A sign-in link was sent to
signin-open = Open it in this browser.
signin-as = Sign in as
signin-confirm = Sign in

## A submission's states

state-queued = queued
state-checking = checking
state-running = running the match
state-scored = scored
state-disqualified = disqualified
state-check-failed = check failed
state-error = not judged (the judge's error)
state-superseded = superseded (a newer upload came before it was judged)

## Table columns

col-uploaded = uploaded
col-file = file
col-state = state
col-share = share
col-tiebreak = tie-break round
col-cells = cells
col-violations = violations
col-rounds = rounds
col-agent = agent
col-version = version
col-replay = replay
col-round = round
col-place = place
col-address = address
col-reason = reason
col-when = when
col-who = who
col-what = what

## Refusals

refused-title = Not done
refused-back-me = Back to your submission
refused-back-home = the competition's page

## One's submission

upload-agent = Your agent
upload-button = Upload
upload-note = one .py file, at most { $kib } KiB; it replaces your last one
me-title = Your submission
me-none = No submission yet.
me-uploads = Your uploads
me-last-counts = The last one counts.
status-title = Submission { $id }:
status-bytes = { $bytes ->
    [one] { $bytes } byte
   *[other] { $bytes } bytes
}
status-uploaded = uploaded { $at }
status-updates = This page updates by itself.
result-caption = The judged match
result-council = the Council fell
result-council-fell = in round { $round }
result-council-held = no
result-slowest = Slowest answers:
answer-time = round { $round }: { $took }
answer-time-of = round { $round }: { $took } of { $limit }
result-replay = the replay
result-log = your agent's log
check-title = The check
check-passes = passes
check-fails = fails
check-log = Your agent's log in the check
check-log-what = (what it printed, and the traceback of a crash)

## The leaderboard

board-title = Leaderboard
board-note = Each participant's last upload against the Council on the reference map: share of the map, then the round the share was first reached (lower is better). A disqualified submission is not on it.
board-pending = being judged
board-empty = Nobody is on the leaderboard yet.
flash-title = Flash victory
flash-note = The Council eliminated, the lowest round first (any upload of the testing period).
flash-empty = The Council has not fallen yet.

## The final

final-title = The final
final-at = The final is at { $at }.
final-playing = The final is being played.
final-watch = Watch it live
final-failed = The final failed:
final-results = Results
final-council-fell = The Council fell in round { $round }.
final-council-held = The Council held out.
final-disqualified = DQ
final-replay = The replay

## The organisers' page

org-title = Organisers
org-jobs = jobs:
org-pending = pending:
org-database = database:
org-finalists = The finalists
org-newer-judged = (a newer upload is being judged)
org-download-review = download for the review
org-seating = Seating
org-submissions = Submissions
org-rejudge-all = Re-judge every current submission
org-submissions-region = the submissions (scrolls sideways)
org-file = file
org-rejudge = re-judge
org-audit = Audit log
org-audit-region = the audit log (scrolls sideways)
seat-col-seat = seat
seat-col-region = region
seat-col-finalist = finalist
seat-region-corner = corner
seat-region-edge = edge
seat-on-board = { $place }. on the board
seat-fill = fill (final.fill)
seat-note = Seats follow the final map's fixed permutation of the board's order (docs/rules.md §9); seat 0 starts the resolution of round 0, the Council sits last. An exact tie in the final goes to the better leaderboard place.
seat-error = The seating cannot be shown:
final-cut-stopped = The final (run { $run }) was cut off (the server was stopped).
final-cut-died = The final (run { $run }) was cut off (the server stopped during it).
final-cut-continue = Continue it from its last complete round: the engine's state is rebuilt from its replay, the finalists' agents start again (their memory lost, no violation counted), the projection picks up where it stopped.
final-continue = Continue the final
final-run-state = The final (run { $run }): { $state }.
final-state-running = being played
final-state-interrupted = interrupted
final-state-finished = finished
final-state-failed = failed
final-state-abandoned = set aside
final-run = Run the final
final-pending = { $pending } upload(s) or re-judging(s) still being judged: the final waits for them (this page updates by itself)
final-run-again = Run the final again from its start
final-run-again-note = the cut-off final's rounds are set aside; "Continue the final" keeps them
final-run-note = the seating below on the final map against the final opponent; the projection page opens and waits for its start
final-not-yet = The final can be run once the deadline has passed.

## The similarity review

review-title = Similarity review
review-note = Every participant's last upload ({ $uploads }) against every other's, for the code review before the final (docs/arena.md, "The similarity review").
review-col-code = Code
review-code-note = the share of the smaller file's fingerprints (normalised Python tokens: names and literals forgotten) that the other file has too; flagged from { $flag }.
review-col-behaviour = Behaviour
review-behaviour-note = the share of rounds of their leaderboard matches in which both agents, seeing the same, commanded the same; flagged from { $flag }. A flag asks for a look, not a verdict.
review-flagged = flagged
review-none = No pair to compare yet.
review-col-who = participants (upload, agent)
review-col-files = files
review-and = and
review-side-by-side = side by side
review-by-code = The most alike by code
review-by-behaviour = The most alike by behaviour
compare-title = Side by side
compare-download = download
compare-file = the file of submission { $id }
compare-marked = Marked
compare-marked-note = lines are covered by a fingerprint the other file has too.
compare-back = Back to the review

## An e-mail address refused

email-refused = `{ $address }` is not an e-mail address this site accepts: { $why }
email-not-ascii = `{ $char }` is not an ASCII character
email-too-long = it is { $length } characters long; at most 254
email-no-at = it has no `@`
email-two-ats = it has more than one `@`
email-no-local = nothing before the `@`
email-local-too-long = the part before the `@` is { $length } characters long; at most 64
email-local-char = `{ $char }` before the `@` (letters, digits and .+-_ only)
email-local-dots = a dot at either end of the part before the `@`, or two in a row
email-no-domain = nothing after the `@`
email-domain-dots = a dot at either end of the domain, or two in a row
email-no-dot = the domain `{ $domain }` has no dot (a name like example.org)
email-label-too-long = a part of the domain is { $length } characters long; at most 63
email-domain-char = `{ $char }` in the domain (letters, digits and hyphens only)
email-hyphen = the domain's part `{ $label }` begins or ends with a hyphen

## Page titles

title-submission = Submission { $id }

## Refusals and errors

err-misdirected = this site is { $url }
err-cross-site = forbidden: a request from another site
err-internal = the server failed while { $doing }; it is logged for the organisers: try again in a moment
err-signin-closed = sign-in opens at { $at }
err-signins-address = too many sign-in e-mails to this address in the last hour: use the last one sent, or try again later
err-signins-requester = too many sign-in e-mails asked from your network in the last hour: try again later
err-signins-site = the site has sent too many sign-in e-mails to new addresses in the last hour: try again later
err-mail = the e-mail could not be sent: the mail server refused it; try again later
err-link = this sign-in link is unknown, used or expired: ask for a new one
err-randomness = no randomness
err-not-yours = no submission of yours has this number
err-no-log = this submission has no log (yet)
err-log = the log: { $error }
err-uploads-open = uploads open at { $at }
err-deadline-passed = the deadline passed at { $at }: no upload is accepted after it (an upload counts when its file has arrived whole); what you had submitted then counts
err-upload-broken = the upload: { $error }
err-too-big = the file is over { $bytes } bytes ({ $kib } KiB): the submission is one .py file of at most that
err-upload-slow = the upload took over { $seconds } s: send the file again on a better connection
err-stale-upload = the form is stale or from elsewhere: reload the page and upload again
err-stale = the form is stale or from elsewhere: reload the page
err-form = the form cannot be read ({ $error }): reload the page
err-no-file = no file was chosen
err-not-python = the submission is one Python file (*.py)
err-empty = the file is empty
err-too-many-uploads = { $limit ->
    [one] the limit is { $limit } upload an hour, and you have made it: try again later
   *[other] the limit is { $limit } uploads an hour, and you have made them: try again later
}
err-no-such-submission = no such submission
err-no-replay = this submission has no replay (yet)
err-replay-private = this replay is its author's until it is on the leaderboard
err-replay = the replay: { $error }
err-not-organiser = the organisers' pages need an organiser's address
err-no-submission = there is no submission { $id }
err-rejudge-what = re-judge a submission's number, or all
err-file = the file: { $error }
err-final-early = the final is played after the deadline ({ $deadline }): until then uploads can change the top eight
err-final-cut = the final (run { $run }) was cut off: continue it from its last complete round (Continue the final), or run it again from its start (Run the final again)
err-final-pending = { $pending } upload(s) or re-judging(s) are still being judged: the leaderboard, and so the finalists, are not settled until they are. The button works once the organisers' page shows none pending.
err-no-cut-final = no final was cut off: there is none to continue
err-no-seats = this final's seats were not recorded (it was started by an older version): run it again instead
err-final-not-cut = the final is no longer cut off
err-final-not-played = the final has not been played
err-final-organiser = only an organiser starts or pauses the final
err-final-not-live = the final is not being played now (see /final)

## What the server was doing when it failed (after "the server failed while")

doing-signin-code = drawing a sign-in code
doing-signin-record = recording the sign-in
doing-board = reading the leaderboard
doing-mail = sending the e-mail
doing-session = opening the session
doing-count-uploads = counting uploads
doing-store-file = storing the file
doing-record-upload = recording the upload
doing-find-submission = looking the submission up
doing-queue-rejudge = queueing the re-judging
doing-read-file = reading a submission's file
doing-compare = comparing the files
doing-read-final = reading the final
doing-read-board = reading the leaderboard
doing-start-final = starting the final
doing-read-final-replay = reading the final's replay
doing-mark-final = marking the final running
doing-continue-final = continuing the final

## E-mails

mail-signin-subject = { $name }: your sign-in link
mail-signin-body =
    To sign in to { $name } as { $email }, open this link within { $minutes } minutes:

    { $link }

    If you did not ask to sign in, ignore this e-mail.
mail-result-subject = { $name }: your submission { $id }
mail-result-subject-again = { $name }: your submission { $id }, judged again
mail-result-again = It was judged again at the organisers' request; this result replaces the one sent before.
mail-result-body =
    Your submission { $file } ({ $agent }) to { $name } { $what }.

    { $again }Its status page: { $link }
mail-scored = { $violations ->
    [one] scored { $share } % of the map (tie-break round { $tiebreak }, { $violations } violation)
   *[other] scored { $share } % of the map (tie-break round { $tiebreak }, { $violations } violations)
}
mail-disqualified = was { $reason }
mail-check-failed = failed the check: { $reason }
mail-error = could not be judged: { $reason }

## Reasons

reason-disqualified = disqualified in round { $round }
reason-disqualified-violation = disqualified in round { $round }: the fourth violation ({ $kind }: { $detail })
violation-timeout = timeout
violation-crash = crash
violation-unreadable = unreadable
reason-map = the leaderboard's map: { $detail }
reason-folder = the judge cannot create its folder { $detail }
reason-not-python = the file cannot be read as Python: { $detail }
reason-check-did-not-run = the check could not run: { $detail }
reason-match-not-played = the match could not be played: { $detail }
reason-superseded = superseded by upload { $detail } before it was judged (the last upload counts)

## Public results

export-title = Public results
export-closed = The public results are not open yet: they open when the deadline has passed ({ $opens }), or earlier when the organisers open them.
export-intro = Everything the results rest on, for anyone to check: the leaderboard, the final, and every replay they come from.
export-downloads = Downloads
export-archive = ({ $bytes } bytes): all of the below in one archive
export-board = the leaderboard (the JSON also holds the flash victories)
export-final = the final's places
export-final-later = The final's results come here once the final has been played.
export-manifest = every replay ({ $replays }) with its SHA-256 and the figures published for it
export-check-title = How to check them
export-check-how = With the gbely command line, in a fresh folder:
export-check-what = It checks every file's SHA-256 against the manifest, re-simulates every replay from the agents' recorded commands and compares the published share, cells, tie-break round and violations with each replay's result: one line per replay, then a summary, and exit code 0 only when everything matches.
export-api = For tools and notebooks: /api/board answers the leaderboard as JSON; signed in, /api/me/submissions your own submissions.
export-no-final = the final has not been played yet
export-no-file = no such file of the public results (see /export)
export-open-since = Open since { $at }, opened by an organiser.
export-open-deadline = Open: the deadline passed at { $deadline }.
export-state-closed = Closed: they open by themselves when the deadline has passed ({ $deadline }).
export-open-now = Open the public results now
export-open-note = the leaderboard, the replays and their manifest become public at once; this cannot be undone
doing-export-state = reading whether the results are open
doing-export = making the public results
doing-export-open = opening the public results

## Judges over HTTP (/org, Workers)
workers-title = Workers
workers-intro = Judges on other machines: `gbely arena worker --server URL` with a token issued here judges over HTTP and needs neither the database nor the data folder. A revoked token is refused at once, and the jobs its worker held go back to the queue.
workers-none = No worker token has been issued.
workers-col-name = Worker
workers-col-issued = Issued
workers-col-seen = Last seen
workers-col-judged = Jobs ended
workers-col-state = Token
workers-revoked = revoked { $at }
workers-revoke = Revoke
workers-name = Name of the new worker
workers-issue = Issue a worker token
workers-issued-title = The token of worker { $name }
workers-issued-once = It is shown this once: the server keeps only its hash. Copy it to the worker's machine now.
workers-issued-how = Run the worker with it (the token in the environment, never on the command line):
workers-back = Back to the organisers' page
workers-err-name = Give the worker a name (it is shown on the organisers' page).
workers-err-none = There is no valid worker token { $id } (it does not exist, or it was revoked before).
doing-worker-token = keeping the worker's token
doing-worker-revoke = revoking the worker's token
workers-col-speed = Speed
workers-speed = { $share }× the server's
workers-slow = { $share }× the server's: too slow, given no jobs
workers-speed-figures = engine { $engine } ms, Python { $python } ms ({ $at })
workers-rejudge-timeouts = Re-judge its { $count ->
    [one] disqualification
   *[other] { $count } disqualifications
} by timeouts

## The audit log (/org): what an organiser did, and its detail
audit-rejudge = re-judge
audit-rejudge-one = submission { $submission }
audit-rejudge-all = all current submissions ({ $count })
audit-download = download
audit-download-detail = the file of submission { $submission } ({ $email })
audit-compare = compare
audit-compare-detail = the files of submissions { $first } ({ $first_email }) and { $second } ({ $second_email })
audit-run-final = run the final
audit-final = final { $run }
audit-set-aside-final = set aside the final
audit-set-aside-detail = final { $run }, cut off, run again from its start
audit-resume-final = resume the final
audit-resume-detail = final { $run } from round { $round }
audit-open-results = open the public results
audit-open-results-detail = before the deadline, by hand
audit-issue-worker = issue a worker token
audit-revoke-worker = revoke a worker token
audit-worker = worker { $worker }
audit-rejudge-timeouts = re-judge a worker's timeout disqualifications
audit-rejudge-timeouts-detail = worker { $worker }: submissions { $submissions }

## The check's report (/me): each line of `gbely check`, from its code and values
check-not-python-file = { $file } is not a .py file: the submission is one Python file
check-too-big = the file has { $bytes } bytes; the limit is { $limit } (512 KiB)
check-size = size { $bytes } bytes of { $limit } allowed
check-does-not-parse = the file does not parse: { $error }
check-name = name { $name } (AGENT_NAME / AGENT_VERSION)
check-game-version = { $file } says GAME_VERSION = { $version }, but this engine plays the rules of version { $engine }
check-no-decide = the file defines no top-level function decide(stav)
check-other-branch = on another branch: { $kind ->
    [async] decide (line { $line }) is an async function: the harness calls decide(stav) and needs the commands, not a coroutine
    [class] decide (line { $line }) is a class, not a function decide(stav)
    [value] decide (line { $line }) is assigned a value ({ $type }), not a function: define def decide(stav): at the top level
   *[other] decide is not defined at all
}
check-decide-not-a-function = { $kind ->
    [async] decide (line { $line }) is an async function: the harness calls decide(stav) and needs the commands, not a coroutine
    [class] decide (line { $line }) is a class, not a function decide(stav)
   *[other] decide (line { $line }) is assigned a value ({ $type }), not a function: define def decide(stav): at the top level
}
check-decide-assigned = decide (line { $line }) is assigned the result of an expression: the check cannot see that it is a function
check-foreign-imports = imports outside the standard library (the judge will not have them): { $modules }
check-optional-imports = optional imports outside the standard library, guarded by try/except ImportError: { $modules } (the judge will not have them: your fallback will run)
check-cannot-at-judge = { $imports ->
    [yes] imports
   *[no] calls
} { $name } ({ $count ->
    [one] line
   *[other] lines
} { $lines }{ $more ->
    [0] {""}
   *[other] {" "}and { $more } more
}): { $network ->
    [yes] the judge has no network
   *[no] the judge gives no other processes
}
check-dropped-lines = { $count ->
    [one] { $count } line written after a round's answer was dropped
   *[other] { $count } lines written after a round's answer were dropped
}: the first line after an observation is the answer, one a round (print to stderr, not stdout)
check-violation = violation in round { $round }: { $kind } — { $detail }
check-disqualified = the test match disqualified the agent in round { $round } (its fourth violation): a match at the judge would end the same way
check-violations = { $count ->
    [one] { $count } violation
   *[other] { $count } violations
} in the test match: a match tolerates three, the fourth disqualifies (rules §8)
check-test-match = test match: { $rounds } rounds against the Council on the reference map; { $cells } cells at the end; { $discarded ->
    [0] no command discarded
   *[other] { $discarded } discarded: { $discards }
}
check-sandboxed = test match in the judge's sandbox: no network and no files but its own
check-not-sandboxed = the test match ran without the judge's sandbox: { $why }
# A discarded command's reason (its code as replays write it), in a test match's line.
discard-not_an_object = not a JSON object
discard-unknown_type = unknown command type (not MOVE, ATTACK or FORTIFY)
discard-missing_field = a required field is missing
discard-wrong_field_type = a field has the wrong JSON type
discard-unknown_cell = cell id not on the map
discard-invalid_amount = amount is not a finite number > 0
discard-source_not_owned = source cell not owned
discard-target_not_owned = MOVE target not owned
discard-not_adjacent = target not adjacent
discard-target_own_cell = ATTACK on an own cell
discard-target_finalist = ATTACK on another finalist
discard-no_ready_units = not enough ready units (0 ready)
