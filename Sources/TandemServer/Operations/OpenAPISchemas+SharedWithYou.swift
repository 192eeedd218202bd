import TandemCore

/// Component schemas for Shared with You: conversations, highlights, notices, membership prompts.
extension OpenAPISchemas {
    static var sharedWithYou: JSONObject {
        let enumeration = { (values: [String]) -> JSONValue in ["type": "string", "enum": .array(values.map(JSONValue.string))] }
        let link = object(["url": string, "title": string, "imageURL": string], required: ["url"])
        let collaboration = object(["collaborationIdentifier": string, "url": string, "title": string, "creationDate": integer,
                                    "contentType": string, "owner": string, "kind": enumeration(["share", "custom"])])
        let notice = object(["event": enumeration(["change", "mention", "persistence", "membership"]), "trigger": integer, "triggerName": string,
                             "collaborationIdentifier": string, "url": string, "title": string, "mentioned": string, "mentionedHandle": string])
        let event = object(["eventID": string, "conversationID": string, "seq": integer,
                            "kind": enumeration(["message", "memberAdded", "memberRemoved", "notice"]), "actor": string, "createdAt": integer,
                            "member": string, "text": string, "links": array(link), "collaborationIdentifier": string, "notice": notice])
        let attribution = object(["sender": string, "conversationID": string, "isGroup": boolean, "eventID": string, "date": integer,
                                  "pinned": boolean, "title": string])
        let highlight = object(["identifier": string, "url": string, "date": integer, "pinned": boolean, "suggested": boolean,
                                "attributions": array(attribution), "collaboration": collaboration])
        let prompt = object(["promptID": string, "conversationID": string, "person": string, "change": enumeration(["add", "remove"]),
                             "state": enumeration(["pending", "accepted", "declined"]), "message": string, "createdAt": integer,
                             "collaborations": array(collaboration)])
        let authorization = enumeration(["allowed", "deniedGlobally", "deniedForApp"])
        // Names and pictures by user record name, only of people the caller shares a conversation or a share with (R32).
        let people: JSONValue = ["type": "object", "additionalProperties": ref("UserIdentity")]
        return [
            "Empty": object([:]),
            "Conversation": object(["conversationID": string, "isGroup": boolean, "title": string, "createdBy": string, "createdAt": integer,
                                    "members": array(string)]),
            "ConversationList": object(["conversations": array(ref("Conversation"))]),
            "ConversationCreateRequest": object(["members": array(string), "title": string, "group": boolean], required: ["members"]),
            "ConversationMemberRequest": object(["conversation": string, "member": string], required: ["conversation", "member"]),
            "ConversationEvent": event,
            "ConversationEventPage": object(["events": array(event), "continuationMarker": string, "moreComing": boolean]),
            "MessageSendRequest": object(["conversation": string, "text": string, "links": array(link),
                                          "collaboration": object(["collaborationIdentifier": string, "url": string, "title": string, "contentType": string],
                                                                  required: ["collaborationIdentifier", "url"]),
                                          "shareMode": enumeration(["collaborate", "sendCopy"]),
                                          "permission": enumeration(["READ_ONLY", "READ_WRITE"])], required: ["conversation"]),
            "PinRequest": object(["conversation": string, "url": string, "pinned": boolean], required: ["conversation", "url"]),
            "ContactList": object(["contacts": array(object(["handle": string, "userRecordName": string]))]),
            "ContactModifyRequest": object(["add": array(string), "remove": array(string)]),
            "ConsentList": object(["consent": array(object(["scope": enumeration(["global", "app", "conversation"]), "target": string,
                                                            "allowed": boolean]))]),
            "ConsentModifyRequest": object(["scope": enumeration(["global", "app", "conversation"]), "target": string, "allowed": boolean],
                                           required: ["scope", "allowed"]),
            "Highlight": highlight,
            "HighlightList": object(["app": string, "authorization": authorization, "highlights": array(highlight), "people": people]),
            "HighlightURLRequest": object(["url": string], required: ["url"]),
            "HighlightFeedbackRequest": object(["url": string, "context": enumeration(["summary", "detail"])], required: ["url", "context"]),
            "NoticePostRequest": object(["collaborationIdentifier": string, "url": string,
                                         "event": enumeration(["change", "mention", "persistence", "membership"]),
                                         "trigger": ["oneOf": [integer, string]], "mentionedIdentity": string, "mentionedHandle": string],
                                        required: ["event"]),
            "NoticeList": object(["notices": array(event), "people": people]),
            "NoticeClearRequest": object(["collaborationIdentifier": string], required: ["collaborationIdentifier"]),
            "MembershipPromptList": object(["prompts": array(prompt)]),
            "MembershipPromptResponse": object(["promptID": string, "accept": boolean], required: ["promptID", "accept"]),
            "MembershipPromptResult": object(["prompt": prompt, "participantsUpdates": array(object([
                "collaborationIdentifier": string, "person": string, "change": enumeration(["add", "remove"]), "rootHash": string]))]),
            "ActivityInvitationCreateRequest": object(["conversationID": string, "activity": ref("SessionActivity"), "lifetime": integer],
                                                      required: ["conversationID", "activity"]),
            "ActivityInvitation": object(["invitationID": string, "url": string, "code": string, "conversationID": string, "creator": string,
                                          "activity": ref("SessionActivity"), "createdAt": integer, "expiresAt": integer]),
            "ActivityInvitationReference": object(["invitation": string], required: ["invitation"]),
            "ActivityInvitationPreview": object(["canJoin": boolean, "invitationID": string, "conversationID": string, "creator": string,
                                                 "activity": ref("SessionActivity"), "expiresAt": integer]),
            "ActivityInvitationRevokeRequest": object(["invitationID": string], required: ["invitationID"]),
            "SessionActivity": object(["identifier": string, "payload": string,
                                       "metadata": object(["title": string, "subtitle": string, "type": string, "fallbackURL": string,
                                                           "lifetimePolicy": enumeration(["automatic", "endsWhenInitiatorLeaves"])])],
                                      required: ["identifier"]),
        ]
    }
}
