package photosocial

import (
	"bytes"
	"encoding/json"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// Profile is the response of /photosocial/profile. A private account
// answers an empty response ({}, an empty body, data null, or a user with
// neither id nor username) and is charged nothing: Empty is then true and
// the other fields are zero (Raw and Credits keep what came).
type Profile struct {
	Empty        bool
	ID           sources.Text
	Username     sources.Text
	FullName     sources.Text
	Biography    sources.Text
	PicURL       sources.Text // profile_pic_url_hd, else profile_pic_url
	IsPrivate    sources.Flag
	Followers    sources.Int64
	Following    sources.Int64
	Posts        sources.Int64
	IsVerified   sources.Flag
	IsBusiness   sources.Flag
	CategoryName sources.NullText // null when the account does not expose it
	Contact      Contact
	Credits      sources.Credits
	Raw          json.RawMessage
}

// Contact is the contact information an account exposes publicly; each
// field is null when not exposed. Each takes the first of the upstream's
// spellings that is present: Email from business_email or public_email;
// Phone from business_phone_number, public_phone_number or
// contact_phone_number; Address from business_address_json (kept as the JSON
// text it is) or address_street.
type Contact struct {
	Email   sources.NullText
	Phone   sources.NullText
	Address sources.NullText
}

type userWire struct {
	ID                  sources.Text              `json:"id"`
	PK                  sources.Text              `json:"pk"`
	Username            sources.Text              `json:"username"`
	FullName            sources.Text              `json:"full_name"`
	Biography           sources.Text              `json:"biography"`
	ProfilePicURL       sources.Text              `json:"profile_pic_url"`
	ProfilePicURLHD     sources.Text              `json:"profile_pic_url_hd"`
	IsPrivate           sources.Flag              `json:"is_private"`
	EdgeFollowedBy      sources.Object[countEdge] `json:"edge_followed_by"`
	FollowerCount       sources.Int64             `json:"follower_count"`
	EdgeFollow          sources.Object[countEdge] `json:"edge_follow"`
	FollowingCount      sources.Int64             `json:"following_count"`
	EdgeMedia           sources.Object[countEdge] `json:"edge_owner_to_timeline_media"`
	MediaCount          sources.Int64             `json:"media_count"`
	IsVerified          sources.Flag              `json:"is_verified"`
	IsBusinessAccount   sources.Flag              `json:"is_business_account"`
	IsBusiness          sources.Flag              `json:"is_business"`
	CategoryName        sources.NullText          `json:"category_name"`
	BusinessCategory    sources.NullText          `json:"business_category_name"`
	BusinessEmail       sources.NullText          `json:"business_email"`
	PublicEmail         sources.NullText          `json:"public_email"`
	BusinessPhone       sources.NullText          `json:"business_phone_number"`
	PublicPhone         sources.NullText          `json:"public_phone_number"`
	ContactPhone        sources.NullText          `json:"contact_phone_number"`
	BusinessAddressJSON looseText                 `json:"business_address_json"`
	AddressStreet       sources.NullText          `json:"address_street"`
}

func decodeProfile(a *sources.Answer, p *Profile) error {
	*p = Profile{Raw: a.Body()}
	if t := bytes.TrimSpace(a.Body()); len(t) == 0 || string(t) == "null" {
		p.Empty = true
		return nil
	}
	if a.Err() != nil {
		return a.Err()
	}
	p.Credits = a.Credits()
	var userRaw json.RawMessage
	if raw, ok := a.Member("data"); ok {
		var data sources.Object[struct {
			User json.RawMessage `json:"user"`
		}]
		if err := json.Unmarshal(raw, &data); err != nil {
			return err
		}
		userRaw = data.V.User
	} else if raw, ok := a.Member("user"); ok {
		userRaw = raw
	}
	var u sources.Object[userWire]
	if err := json.Unmarshal(orNull(userRaw), &u); err != nil {
		return err
	}
	w := u.V
	id := sources.FirstText(w.ID, w.PK)
	if !u.OK || (id == "" && w.Username == "") {
		p.Empty = true
		return nil
	}
	p.ID, p.Username, p.FullName, p.Biography = id, w.Username, w.FullName, w.Biography
	p.Followers = sources.FirstInt(w.EdgeFollowedBy.V.Count, w.FollowerCount)
	p.Following = sources.FirstInt(w.EdgeFollow.V.Count, w.FollowingCount)
	p.Posts = sources.FirstInt(w.EdgeMedia.V.Count, w.MediaCount)
	p.PicURL = sources.FirstText(w.ProfilePicURLHD, w.ProfilePicURL)
	p.IsPrivate = w.IsPrivate
	p.IsVerified = w.IsVerified
	p.IsBusiness = sources.FirstFlag(w.IsBusinessAccount, w.IsBusiness)
	p.CategoryName = sources.FirstNull(w.CategoryName, w.BusinessCategory)
	p.Contact = Contact{
		Email:   sources.FirstNull(w.BusinessEmail, w.PublicEmail),
		Phone:   sources.FirstNull(w.BusinessPhone, w.PublicPhone, w.ContactPhone),
		Address: sources.FirstNull(sources.NullText(w.BusinessAddressJSON), w.AddressStreet),
	}
	return nil
}

// orNull turns an absent member into null so it decodes as nothing.
func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// ProfileCall calls /photosocial/profile, the deep profile. A private
// account gives &Profile{Empty: true} and no error.
func ProfileCall(handle string) sources.Call[*Profile] {
	return sources.NewCall(sources.PhotoSocial, "/profile", url.Values{"handle": {sources.NormalizeHandle(handle)}}, sources.DecodeInto(decodeProfile))
}

// Embed is the response of /photosocial/user/embed: markup embedding a
// profile.
type Embed struct {
	HTML    sources.Text    `json:"html"`
	Credits sources.Credits `json:"-"`
	Raw     json.RawMessage `json:"-"`
}

// EmbedCall calls /photosocial/user/embed.
func EmbedCall(handle string) sources.Call[*Embed] {
	return sources.ObjectCall(sources.PhotoSocial, "/user/embed", url.Values{"handle": {sources.NormalizeHandle(handle)}}, sources.DecodeInto(func(a *sources.Answer, e *Embed) error {
		return sources.DecodeObject(a, e, &e.Raw, &e.Credits)
	}))
}

// looseText reads a member that is a string on one variant and an object on
// another (a caption, an address): a string or number gives its text, an
// object or array its compact JSON, null or absence gives null.
type looseText sources.NullText

func (t *looseText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			return err
		}
		*t = looseText{V: buf.String(), Valid: true}
		return nil
	}
	var n sources.NullText
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = looseText(n)
	return nil
}

// countEdge is the {"count": N} object of the photo-sharing profile.
type countEdge struct {
	Count sources.Int64 `json:"count"`
}
