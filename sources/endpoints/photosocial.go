package endpoints

import (
	"bytes"
	"encoding/json"
	"net/url"

	"github.com/socialcrawl/crawler/sources"
)

// PSProfile is the response of /photosocial/profile. A private account
// answers an empty response ({}, an empty body, data null, or a user with
// neither id nor username) and is charged nothing: Empty is then true and
// the other fields are zero (Raw and Credits keep what came).
type PSProfile struct {
	Empty        bool
	ID           Text
	Username     Text
	FullName     Text
	Biography    Text
	PicURL       Text // profile_pic_url_hd, else profile_pic_url
	IsPrivate    Flag
	Followers    Int64
	Following    Int64
	Posts        Int64
	IsVerified   Flag
	IsBusiness   Flag
	CategoryName NullText // null when the account does not expose it
	Contact      PSContact
	Credits      Credits
	Raw          json.RawMessage
}

// PSContact is the contact information an account exposes publicly; each
// field is null when not exposed. Each takes the first of the upstream's
// spellings that is present: Email from business_email or public_email;
// Phone from business_phone_number, public_phone_number or
// contact_phone_number; Address from business_address_json (kept as the JSON
// text it is) or address_street.
type PSContact struct {
	Email   NullText
	Phone   NullText
	Address NullText
}

type psUserWire struct {
	ID                  Text              `json:"id"`
	PK                  Text              `json:"pk"`
	Username            Text              `json:"username"`
	FullName            Text              `json:"full_name"`
	Biography           Text              `json:"biography"`
	ProfilePicURL       Text              `json:"profile_pic_url"`
	ProfilePicURLHD     Text              `json:"profile_pic_url_hd"`
	IsPrivate           Flag              `json:"is_private"`
	EdgeFollowedBy      Object[countEdge] `json:"edge_followed_by"`
	FollowerCount       Int64             `json:"follower_count"`
	EdgeFollow          Object[countEdge] `json:"edge_follow"`
	FollowingCount      Int64             `json:"following_count"`
	EdgeMedia           Object[countEdge] `json:"edge_owner_to_timeline_media"`
	MediaCount          Int64             `json:"media_count"`
	IsVerified          Flag              `json:"is_verified"`
	IsBusinessAccount   Flag              `json:"is_business_account"`
	IsBusiness          Flag              `json:"is_business"`
	CategoryName        NullText          `json:"category_name"`
	BusinessCategory    NullText          `json:"business_category_name"`
	BusinessEmail       NullText          `json:"business_email"`
	PublicEmail         NullText          `json:"public_email"`
	BusinessPhone       NullText          `json:"business_phone_number"`
	PublicPhone         NullText          `json:"public_phone_number"`
	ContactPhone        NullText          `json:"contact_phone_number"`
	BusinessAddressJSON looseText         `json:"business_address_json"`
	AddressStreet       NullText          `json:"address_street"`
}

func decodePSProfile(a *sources.Answer, p *PSProfile) error {
	*p = PSProfile{Raw: a.Body()}
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
		var data Object[struct {
			User json.RawMessage `json:"user"`
		}]
		if err := json.Unmarshal(raw, &data); err != nil {
			return err
		}
		userRaw = data.V.User
	} else if raw, ok := a.Member("user"); ok {
		userRaw = raw
	}
	var u Object[psUserWire]
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
	p.Contact = PSContact{
		Email:   sources.FirstNull(w.BusinessEmail, w.PublicEmail),
		Phone:   sources.FirstNull(w.BusinessPhone, w.PublicPhone, w.ContactPhone),
		Address: sources.FirstNull(NullText(w.BusinessAddressJSON), w.AddressStreet),
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

// PSProfileCall calls /photosocial/profile, the deep profile. A private
// account gives &Profile{Empty: true} and no error.
func PSProfileCall(handle string) sources.Call[*PSProfile] {
	return sources.NewCall(sources.PhotoSocial, "/profile", url.Values{"handle": {sources.NormalizeHandle(handle)}}, sources.DecodeInto(decodePSProfile))
}

// PSEmbed is the response of /photosocial/user/embed: markup embedding a
// profile.
type PSEmbed struct {
	HTML    Text            `json:"html"`
	Credits Credits         `json:"-"`
	Raw     json.RawMessage `json:"-"`
}

// PSEmbedCall calls /photosocial/user/embed.
func PSEmbedCall(handle string) sources.Call[*PSEmbed] {
	return sources.ObjectCall(sources.PhotoSocial, "/user/embed", url.Values{"handle": {sources.NormalizeHandle(handle)}}, sources.DecodeInto(func(a *sources.Answer, e *PSEmbed) error {
		return sources.DecodeObject(a, e, &e.Raw, &e.Credits)
	}))
}

// looseText reads a member that is a string on one variant and an object on
// another (a caption, an address): a string or number gives its text, an
// object or array its compact JSON, null or absence gives null.
type looseText NullText

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
	var n NullText
	if err := n.UnmarshalJSON(b); err != nil {
		return err
	}
	*t = looseText(n)
	return nil
}

// countEdge is the {"count": N} object of the photo-sharing profile.
type countEdge struct {
	Count Int64 `json:"count"`
}
