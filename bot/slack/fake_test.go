package slack_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack/slacktest"
)

// fakeSlack is slack-go's slacktest server with the Web API methods Quartermaster calls
// (chat.postMessage, chat.update, users.info, users.lookupByEmail, views.open/update/publish) and
// a response_url endpoint, each recording what it was sent.
type fakeSlack struct {
	t   testing.TB
	srv *slacktest.Server

	mu        sync.Mutex
	ts        int
	users     map[string]string  // user id -> email
	posts     []message          // chat.postMessage
	updates   []message          // chat.update
	responses []message          // response_url
	views     []view             // views.open, views.update, views.publish
	userInfo  int                // users.info calls
	limited   map[string]int     // method -> how many more calls answer 429
	uploads   map[string]*upload // file id -> what files.getUploadURLExternal promised and the upload brought
	shares    []share            // files.completeUploadExternal
	viewCalls map[string]int     // views.open/update/publish calls, 429s included
	// refuse answers chat.postMessage to a channel (as it was named) with a Slack error, such as
	// not_in_channel.
	refuse map[string]string
	// deactivated are the user ids whose accounts are deactivated (users.* say deleted: true).
	deactivated map[string]bool
	// refuseBlocks, when set, is the Slack error (invalid_blocks, msg_too_long…) with which
	// chat.postMessage, chat.update and the response_url refuse every message that has blocks;
	// the response_url answers it with HTTP 400, as a webhook does.
	refuseBlocks string
	// infoError, when set, is the Slack error every users.info call answers.
	infoError string
	// bareLimits, when set, answers the 429s without a Retry-After header, as a proxy may.
	bareLimits bool
	// onLimited, when set, is called (with mu held) after each 429 is answered.
	onLimited func(method string)
	// checkHashes has views.update refuse a hash that is not the view's latest (hash_conflict),
	// as Slack does; hashes holds each view's latest.
	checkHashes bool
	hashes      map[string]string
}

// setUsers makes users (user id -> email) the workspace's people, as users.info and
// users.lookupByEmail answer them.
func (f *fakeSlack) setUsers(users map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.users = users
}

// upload is one file of Slack's upload API: announced with files.getUploadURLExternal, then
// sent to the upload URL it returned.
type upload struct {
	ID       string
	Name     string
	Length   int    // announced
	AltText  string // announced
	Content  []byte // what arrived at the upload URL; nil until it does
	Uploaded string // the multipart file name it arrived with
}

// share is a files.completeUploadExternal call: which uploaded files were shared where.
type share struct {
	Channel string
	Comment string
	Thread  string
	Files   []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
}

// message is a message as Slack received it.
type message struct {
	Channel      string // the channel id it landed in (D… for a DM)
	TS           string
	Text         string
	Blocks       []map[string]any
	ResponseType string // response_url only
	Replace      bool   // response_url only
}

// view is a views.* call.
type view struct {
	Method  string // open, update, publish
	Trigger string
	ViewID  string
	Hash    string
	User    string
	View    map[string]any
}

func newFakeSlack(t testing.TB) *fakeSlack {
	f := &fakeSlack{t: t, limited: map[string]int{}, uploads: map[string]*upload{}, viewCalls: map[string]int{}, users: map[string]string{
		"UALICE": "alice@acme.example",
		"UBOB":   "bob@acme.example",
		"UDANA":  "Dana@Acme.example", // profiles need not be lower case
		"UCARL":  "carl@contractor.example",
		"UEVE":   "eve@elsewhere.example",
		"UBOT":   "",
	}}
	f.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", f.postMessage)
		c.Handle("/chat.update", f.chatUpdate)
		c.Handle("/users.info", f.usersInfo)
		c.Handle("/users.lookupByEmail", f.lookupByEmail)
		c.Handle("/views.open", f.viewsCall("open"))
		c.Handle("/views.update", f.viewsCall("update"))
		c.Handle("/views.publish", f.viewsCall("publish"))
		c.Handle("/response/", f.response)
		c.Handle("/files.getUploadURLExternal", f.getUploadURL)
		c.Handle("/upload/", f.uploadFile)
		c.Handle("/files.completeUploadExternal", f.completeUpload)
	})
	f.srv.Start()
	t.Cleanup(f.srv.Stop)
	return f
}

func (f *fakeSlack) apiURL() string { return f.srv.GetAPIURL() }

// responseURL is a fresh response_url for one delivery.
func (f *fakeSlack) responseURL(n string) string { return f.srv.GetAPIURL() + "response/" + n }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// rateLimited answers 429 while method has some left.
func (f *fakeSlack) rateLimited(w http.ResponseWriter, method string) bool {
	if f.limited[method] > 0 {
		f.limited[method]--
		if !f.bareLimits {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(http.StatusTooManyRequests)
		if f.onLimited != nil {
			f.onLimited(method)
		}
		return true
	}
	return false
}

func form(r *http.Request) url.Values {
	b, _ := io.ReadAll(r.Body)
	v, _ := url.ParseQuery(string(b))
	return v
}

func blocksOf(s string) []map[string]any {
	var b []map[string]any
	if s != "" {
		_ = json.Unmarshal([]byte(s), &b)
	}
	return b
}

// dm is the DM channel id the fake gives a user's DM.
func dm(user string) string { return "D" + user }

func (f *fakeSlack) postMessage(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rateLimited(w, "chat.postMessage") {
		return
	}
	ch := v.Get("channel")
	if f.refuseBlocks != "" && len(blocksOf(v.Get("blocks"))) > 0 {
		writeJSON(w, map[string]any{"ok": false, "error": f.refuseBlocks})
		return
	}
	if e, ok := f.refuse[ch]; ok {
		writeJSON(w, map[string]any{"ok": false, "error": e})
		return
	}
	switch {
	case strings.HasPrefix(ch, "U"):
		ch = dm(ch)
	case strings.HasPrefix(ch, "#"):
		ch = "C" + strings.ToUpper(strings.ReplaceAll(ch[1:], "-", ""))
	}
	f.ts++
	m := message{Channel: ch, TS: fmt.Sprintf("1764500000.%06d", f.ts), Text: v.Get("text"), Blocks: blocksOf(v.Get("blocks"))}
	f.posts = append(f.posts, m)
	writeJSON(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "message": map[string]any{"text": m.Text}})
}

func (f *fakeSlack) chatUpdate(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rateLimited(w, "chat.update") {
		return
	}
	if f.refuseBlocks != "" && len(blocksOf(v.Get("blocks"))) > 0 {
		writeJSON(w, map[string]any{"ok": false, "error": f.refuseBlocks})
		return
	}
	m := message{Channel: v.Get("channel"), TS: v.Get("ts"), Text: v.Get("text"), Blocks: blocksOf(v.Get("blocks"))}
	f.updates = append(f.updates, m)
	writeJSON(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text})
}

func (f *fakeSlack) usersInfo(w http.ResponseWriter, r *http.Request) {
	id := form(r).Get("user")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.userInfo++
	if f.infoError != "" {
		writeJSON(w, map[string]any{"ok": false, "error": f.infoError})
		return
	}
	email, ok := f.users[id]
	if !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "user_not_found"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "user": map[string]any{"id": id, "name": strings.ToLower(id), "profile": map[string]any{"email": email}}})
}

func (f *fakeSlack) lookupByEmail(w http.ResponseWriter, r *http.Request) {
	email := form(r).Get("email")
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, e := range f.users {
		if e != "" && strings.EqualFold(e, email) {
			writeJSON(w, map[string]any{"ok": true, "user": map[string]any{"id": id, "deleted": f.deactivated[id], "profile": map[string]any{"email": e}}})
			return
		}
	}
	writeJSON(w, map[string]any{"ok": false, "error": "users_not_found"})
}

func (f *fakeSlack) viewsCall(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			TriggerID string         `json:"trigger_id"`
			ViewID    string         `json:"view_id"`
			Hash      string         `json:"hash"`
			UserID    string         `json:"user_id"`
			View      map[string]any `json:"view"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		f.mu.Lock()
		defer f.mu.Unlock()
		f.viewCalls[method]++
		if f.rateLimited(w, "views."+method) {
			return
		}
		if f.checkHashes && method == "update" && body.Hash != "" && body.Hash != f.hashes[body.ViewID] {
			writeJSON(w, map[string]any{"ok": false, "error": "hash_conflict"})
			return
		}
		f.views = append(f.views, view{Method: method, Trigger: body.TriggerID, ViewID: body.ViewID, Hash: body.Hash, User: body.UserID, View: body.View})
		id := body.ViewID
		if id == "" {
			id = "V" + strconv.Itoa(len(f.views))
		}
		hash := "h" + strconv.Itoa(len(f.views))
		if f.hashes == nil {
			f.hashes = map[string]string{}
		}
		f.hashes[id] = hash
		writeJSON(w, map[string]any{"ok": true, "view": map[string]any{"id": id, "hash": hash}})
	}
}

func (f *fakeSlack) response(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text            string           `json:"text"`
		Blocks          []map[string]any `json:"blocks"`
		ResponseType    string           `json:"response_type"`
		ReplaceOriginal bool             `json:"replace_original"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuseBlocks != "" && len(body.Blocks) > 0 {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, f.refuseBlocks)
		return
	}
	// An answer through a response_url is a message of its own, ephemeral or not: a click on
	// one of its buttons names it by its ts.
	f.ts++
	f.responses = append(f.responses, message{Channel: strings.TrimPrefix(r.URL.Path, "/response/"), TS: fmt.Sprintf("1764500000.%06d", f.ts),
		Text: body.Text, Blocks: body.Blocks, ResponseType: body.ResponseType, Replace: body.ReplaceOriginal})
	writeJSON(w, map[string]any{"ok": true})
}

// snapshot copies what the fake has recorded.
func (f *fakeSlack) snapshot() (posts, updates, responses []message, views []view) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]message(nil), f.posts...), append([]message(nil), f.updates...),
		append([]message(nil), f.responses...), append([]view(nil), f.views...)
}

func (f *fakeSlack) limit(method string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.limited[method] = n
}

// button is a button as rendered.
type button struct{ ActionID, Label, Value, Style string }

// buttonsIn lists the buttons in blocks.
func buttonsIn(blocks []map[string]any) []button {
	var out []button
	for _, b := range blocks {
		els, _ := b["elements"].([]any)
		for _, e := range els {
			m, _ := e.(map[string]any)
			if m["type"] != "button" {
				continue
			}
			txt, _ := m["text"].(map[string]any)
			bt := button{Label: fmt.Sprint(txt["text"]), Value: fmt.Sprint(m["value"]), ActionID: fmt.Sprint(m["action_id"])}
			if s, ok := m["style"].(string); ok {
				bt.Style = s
			}
			out = append(out, bt)
		}
	}
	return out
}

// textIn is all the text in blocks, for looking things up.
func textIn(blocks []map[string]any) string {
	b, _ := json.Marshal(blocks)
	return string(b)
}

func findButton(t testing.TB, blocks []map[string]any, value string) button {
	t.Helper()
	for _, b := range buttonsIn(blocks) {
		if b.Value == value {
			return b
		}
	}
	t.Fatalf("no button %q in %v", value, buttonsIn(blocks))
	return button{}
}

// getUploadURL answers files.getUploadURLExternal: a file id and a URL to send the file to.
func (f *fakeSlack) getUploadURL(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rateLimited(w, "files.getUploadURLExternal") {
		return
	}
	n, err := strconv.Atoi(v.Get("length"))
	if v.Get("filename") == "" || err != nil || n <= 0 {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	id := fmt.Sprintf("F%04d", len(f.uploads)+1)
	f.uploads[id] = &upload{ID: id, Name: v.Get("filename"), Length: n, AltText: v.Get("alt_txt")}
	writeJSON(w, map[string]any{"ok": true, "upload_url": f.srv.GetAPIURL() + "upload/" + id, "file_id": id})
}

// uploadFile receives a file at its upload URL, as multipart form data in the field "file".
func (f *fakeSlack) uploadFile(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	file, hdr, err := r.FormFile("file")
	if err != nil {
		http.Error(w, "no file", http.StatusBadRequest)
		return
	}
	defer file.Close()
	b, _ := io.ReadAll(file)
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.uploads[id]
	if !ok {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	u.Content, u.Uploaded = b, hdr.Filename
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "OK - "+strconv.Itoa(len(b)))
}

// completeUpload answers files.completeUploadExternal: every file must have arrived whole.
func (f *fakeSlack) completeUpload(w http.ResponseWriter, r *http.Request) {
	v := form(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rateLimited(w, "files.completeUploadExternal") {
		return
	}
	sh := share{Channel: v.Get("channel_id"), Comment: v.Get("initial_comment"), Thread: v.Get("thread_ts")}
	if err := json.Unmarshal([]byte(v.Get("files")), &sh.Files); err != nil || len(sh.Files) == 0 {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	var out []map[string]any
	for _, fl := range sh.Files {
		u, ok := f.uploads[fl.ID]
		if !ok || u.Content == nil || len(u.Content) != u.Length {
			writeJSON(w, map[string]any{"ok": false, "error": "file_not_found"})
			return
		}
		out = append(out, map[string]any{"id": fl.ID, "title": fl.Title})
	}
	f.shares = append(f.shares, sh)
	writeJSON(w, map[string]any{"ok": true, "files": out})
}

// files are the uploads and shares the fake has seen.
func (f *fakeSlack) files() (map[string]upload, []share) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ups := map[string]upload{}
	for k, u := range f.uploads {
		ups[k] = *u
	}
	return ups, append([]share(nil), f.shares...)
}
