// Code generated via abigen V2 - DO NOT EDIT.
// This file is a generated binding and any manual changes will be lost.

package contracts

import (
	"bytes"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Reference imports to suppress errors if they are not otherwise used.
var (
	_ = bytes.Equal
	_ = errors.New
	_ = big.NewInt
	_ = common.Big1
	_ = types.BloomLookup
	_ = abi.ConvertType
)

// ReputationRegistryMetaData contains all meta data concerning the ReputationRegistry contract.
var ReputationRegistryMetaData = bind.MetaData{
	ABI: "[{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"},{\"indexed\":true,\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"}],\"name\":\"FeedbackRevoked\",\"type\":\"event\"},{\"anonymous\":false,\"inputs\":[{\"indexed\":true,\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"indexed\":true,\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"},{\"indexed\":false,\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"},{\"indexed\":false,\"internalType\":\"uint8\",\"name\":\"score\",\"type\":\"uint8\"},{\"indexed\":true,\"internalType\":\"string\",\"name\":\"indexedTag1\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"endpoint\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"string\",\"name\":\"feedbackURI\",\"type\":\"string\"},{\"indexed\":false,\"internalType\":\"bytes32\",\"name\":\"feedbackHash\",\"type\":\"bytes32\"}],\"name\":\"NewFeedback\",\"type\":\"event\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"}],\"name\":\"getClients\",\"outputs\":[{\"internalType\":\"address[]\",\"name\":\"\",\"type\":\"address[]\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[],\"name\":\"getIdentityRegistry\",\"outputs\":[{\"internalType\":\"address\",\"name\":\"\",\"type\":\"address\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"}],\"name\":\"getLastIndex\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"\",\"type\":\"uint64\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"address[]\",\"name\":\"clientAddresses\",\"type\":\"address[]\"},{\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"}],\"name\":\"getSummary\",\"outputs\":[{\"internalType\":\"uint64\",\"name\":\"count\",\"type\":\"uint64\"},{\"internalType\":\"uint8\",\"name\":\"averageScore\",\"type\":\"uint8\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"uint8\",\"name\":\"score\",\"type\":\"uint8\"},{\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"endpoint\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"feedbackURI\",\"type\":\"string\"},{\"internalType\":\"bytes32\",\"name\":\"feedbackHash\",\"type\":\"bytes32\"}],\"name\":\"giveFeedback\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"address\",\"name\":\"clientAddress\",\"type\":\"address\"},{\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"}],\"name\":\"readFeedback\",\"outputs\":[{\"internalType\":\"uint8\",\"name\":\"score\",\"type\":\"uint8\"},{\"internalType\":\"string\",\"name\":\"tag1\",\"type\":\"string\"},{\"internalType\":\"string\",\"name\":\"tag2\",\"type\":\"string\"},{\"internalType\":\"bool\",\"name\":\"isRevoked\",\"type\":\"bool\"}],\"stateMutability\":\"view\",\"type\":\"function\"},{\"inputs\":[{\"internalType\":\"uint256\",\"name\":\"agentId\",\"type\":\"uint256\"},{\"internalType\":\"uint64\",\"name\":\"feedbackIndex\",\"type\":\"uint64\"}],\"name\":\"revokeFeedback\",\"outputs\":[],\"stateMutability\":\"nonpayable\",\"type\":\"function\"}]",
	ID:  "ReputationRegistry",
}

// ReputationRegistry is an auto generated Go binding around an Ethereum contract.
type ReputationRegistry struct {
	abi abi.ABI
}

// GetABI returns the ABI associated with this contract binding.
func (c *ReputationRegistry) GetABI() abi.ABI {
	return c.abi
}

// NewReputationRegistry creates a new instance of ReputationRegistry.
func NewReputationRegistry() *ReputationRegistry {
	parsed, err := ReputationRegistryMetaData.ParseABI()
	if err != nil {
		panic(errors.New("invalid ABI: " + err.Error()))
	}
	return &ReputationRegistry{abi: *parsed}
}

// Instance creates a wrapper for a deployed contract instance at the given address.
// Use this to create the instance object passed to abigen v2 library functions Call, Transact, etc.
func (c *ReputationRegistry) Instance(backend bind.ContractBackend, addr common.Address) *bind.BoundContract {
	return bind.NewBoundContract(addr, c.abi, backend, backend, backend)
}

// PackGetClients is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x42dd519c.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getClients(uint256 agentId) view returns(address[])
func (reputationRegistry *ReputationRegistry) PackGetClients(agentId *big.Int) []byte {
	enc, err := reputationRegistry.abi.Pack("getClients", agentId)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetClients is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x42dd519c.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getClients(uint256 agentId) view returns(address[])
func (reputationRegistry *ReputationRegistry) TryPackGetClients(agentId *big.Int) ([]byte, error) {
	return reputationRegistry.abi.Pack("getClients", agentId)
}

// UnpackGetClients is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x42dd519c.
//
// Solidity: function getClients(uint256 agentId) view returns(address[])
func (reputationRegistry *ReputationRegistry) UnpackGetClients(data []byte) ([]common.Address, error) {
	out, err := reputationRegistry.abi.Unpack("getClients", data)
	if err != nil {
		return *new([]common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new([]common.Address)).(*[]common.Address)
	return out0, nil
}

// PackGetIdentityRegistry is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbc4d861b.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getIdentityRegistry() view returns(address)
func (reputationRegistry *ReputationRegistry) PackGetIdentityRegistry() []byte {
	enc, err := reputationRegistry.abi.Pack("getIdentityRegistry")
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetIdentityRegistry is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xbc4d861b.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getIdentityRegistry() view returns(address)
func (reputationRegistry *ReputationRegistry) TryPackGetIdentityRegistry() ([]byte, error) {
	return reputationRegistry.abi.Pack("getIdentityRegistry")
}

// UnpackGetIdentityRegistry is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xbc4d861b.
//
// Solidity: function getIdentityRegistry() view returns(address)
func (reputationRegistry *ReputationRegistry) UnpackGetIdentityRegistry(data []byte) (common.Address, error) {
	out, err := reputationRegistry.abi.Unpack("getIdentityRegistry", data)
	if err != nil {
		return *new(common.Address), err
	}
	out0 := *abi.ConvertType(out[0], new(common.Address)).(*common.Address)
	return out0, nil
}

// PackGetLastIndex is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2d81759.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getLastIndex(uint256 agentId, address clientAddress) view returns(uint64)
func (reputationRegistry *ReputationRegistry) PackGetLastIndex(agentId *big.Int, clientAddress common.Address) []byte {
	enc, err := reputationRegistry.abi.Pack("getLastIndex", agentId, clientAddress)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetLastIndex is the Go binding used to pack the parameters required for calling
// the contract method with ID 0xf2d81759.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getLastIndex(uint256 agentId, address clientAddress) view returns(uint64)
func (reputationRegistry *ReputationRegistry) TryPackGetLastIndex(agentId *big.Int, clientAddress common.Address) ([]byte, error) {
	return reputationRegistry.abi.Pack("getLastIndex", agentId, clientAddress)
}

// UnpackGetLastIndex is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0xf2d81759.
//
// Solidity: function getLastIndex(uint256 agentId, address clientAddress) view returns(uint64)
func (reputationRegistry *ReputationRegistry) UnpackGetLastIndex(data []byte) (uint64, error) {
	out, err := reputationRegistry.abi.Unpack("getLastIndex", data)
	if err != nil {
		return *new(uint64), err
	}
	out0 := *abi.ConvertType(out[0], new(uint64)).(*uint64)
	return out0, nil
}

// PackGetSummary is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x81bbba58.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns(uint64 count, uint8 averageScore)
func (reputationRegistry *ReputationRegistry) PackGetSummary(agentId *big.Int, clientAddresses []common.Address, tag1 string, tag2 string) []byte {
	enc, err := reputationRegistry.abi.Pack("getSummary", agentId, clientAddresses, tag1, tag2)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGetSummary is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x81bbba58.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns(uint64 count, uint8 averageScore)
func (reputationRegistry *ReputationRegistry) TryPackGetSummary(agentId *big.Int, clientAddresses []common.Address, tag1 string, tag2 string) ([]byte, error) {
	return reputationRegistry.abi.Pack("getSummary", agentId, clientAddresses, tag1, tag2)
}

// GetSummaryOutput serves as a container for the return parameters of contract
// method GetSummary.
type GetSummaryOutput struct {
	Count        uint64
	AverageScore uint8
}

// UnpackGetSummary is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x81bbba58.
//
// Solidity: function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns(uint64 count, uint8 averageScore)
func (reputationRegistry *ReputationRegistry) UnpackGetSummary(data []byte) (GetSummaryOutput, error) {
	out, err := reputationRegistry.abi.Unpack("getSummary", data)
	outstruct := new(GetSummaryOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Count = *abi.ConvertType(out[0], new(uint64)).(*uint64)
	outstruct.AverageScore = *abi.ConvertType(out[1], new(uint8)).(*uint8)
	return *outstruct, nil
}

// PackGiveFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1bae8c36.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function giveFeedback(uint256 agentId, uint8 score, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash) returns()
func (reputationRegistry *ReputationRegistry) PackGiveFeedback(agentId *big.Int, score uint8, tag1 string, tag2 string, endpoint string, feedbackURI string, feedbackHash [32]byte) []byte {
	enc, err := reputationRegistry.abi.Pack("giveFeedback", agentId, score, tag1, tag2, endpoint, feedbackURI, feedbackHash)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackGiveFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x1bae8c36.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function giveFeedback(uint256 agentId, uint8 score, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash) returns()
func (reputationRegistry *ReputationRegistry) TryPackGiveFeedback(agentId *big.Int, score uint8, tag1 string, tag2 string, endpoint string, feedbackURI string, feedbackHash [32]byte) ([]byte, error) {
	return reputationRegistry.abi.Pack("giveFeedback", agentId, score, tag1, tag2, endpoint, feedbackURI, feedbackHash)
}

// PackReadFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x232b0810.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns(uint8 score, string tag1, string tag2, bool isRevoked)
func (reputationRegistry *ReputationRegistry) PackReadFeedback(agentId *big.Int, clientAddress common.Address, feedbackIndex uint64) []byte {
	enc, err := reputationRegistry.abi.Pack("readFeedback", agentId, clientAddress, feedbackIndex)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackReadFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x232b0810.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns(uint8 score, string tag1, string tag2, bool isRevoked)
func (reputationRegistry *ReputationRegistry) TryPackReadFeedback(agentId *big.Int, clientAddress common.Address, feedbackIndex uint64) ([]byte, error) {
	return reputationRegistry.abi.Pack("readFeedback", agentId, clientAddress, feedbackIndex)
}

// ReadFeedbackOutput serves as a container for the return parameters of contract
// method ReadFeedback.
type ReadFeedbackOutput struct {
	Score     uint8
	Tag1      string
	Tag2      string
	IsRevoked bool
}

// UnpackReadFeedback is the Go binding that unpacks the parameters returned
// from invoking the contract method with ID 0x232b0810.
//
// Solidity: function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns(uint8 score, string tag1, string tag2, bool isRevoked)
func (reputationRegistry *ReputationRegistry) UnpackReadFeedback(data []byte) (ReadFeedbackOutput, error) {
	out, err := reputationRegistry.abi.Unpack("readFeedback", data)
	outstruct := new(ReadFeedbackOutput)
	if err != nil {
		return *outstruct, err
	}
	outstruct.Score = *abi.ConvertType(out[0], new(uint8)).(*uint8)
	outstruct.Tag1 = *abi.ConvertType(out[1], new(string)).(*string)
	outstruct.Tag2 = *abi.ConvertType(out[2], new(string)).(*string)
	outstruct.IsRevoked = *abi.ConvertType(out[3], new(bool)).(*bool)
	return *outstruct, nil
}

// PackRevokeFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4ab3ca99.  This method will panic if any
// invalid/nil inputs are passed.
//
// Solidity: function revokeFeedback(uint256 agentId, uint64 feedbackIndex) returns()
func (reputationRegistry *ReputationRegistry) PackRevokeFeedback(agentId *big.Int, feedbackIndex uint64) []byte {
	enc, err := reputationRegistry.abi.Pack("revokeFeedback", agentId, feedbackIndex)
	if err != nil {
		panic(err)
	}
	return enc
}

// TryPackRevokeFeedback is the Go binding used to pack the parameters required for calling
// the contract method with ID 0x4ab3ca99.  This method will return an error
// if any inputs are invalid/nil.
//
// Solidity: function revokeFeedback(uint256 agentId, uint64 feedbackIndex) returns()
func (reputationRegistry *ReputationRegistry) TryPackRevokeFeedback(agentId *big.Int, feedbackIndex uint64) ([]byte, error) {
	return reputationRegistry.abi.Pack("revokeFeedback", agentId, feedbackIndex)
}

// ReputationRegistryFeedbackRevoked represents a FeedbackRevoked event raised by the ReputationRegistry contract.
type ReputationRegistryFeedbackRevoked struct {
	AgentId       *big.Int
	ClientAddress common.Address
	FeedbackIndex uint64
	Raw           *types.Log // Blockchain specific contextual infos
}

const ReputationRegistryFeedbackRevokedEventName = "FeedbackRevoked"

// ContractEventName returns the user-defined event name.
func (ReputationRegistryFeedbackRevoked) ContractEventName() string {
	return ReputationRegistryFeedbackRevokedEventName
}

// UnpackFeedbackRevokedEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex)
func (reputationRegistry *ReputationRegistry) UnpackFeedbackRevokedEvent(log *types.Log) (*ReputationRegistryFeedbackRevoked, error) {
	event := "FeedbackRevoked"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != reputationRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ReputationRegistryFeedbackRevoked)
	if len(log.Data) > 0 {
		if err := reputationRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range reputationRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}

// ReputationRegistryNewFeedback represents a NewFeedback event raised by the ReputationRegistry contract.
type ReputationRegistryNewFeedback struct {
	AgentId       *big.Int
	ClientAddress common.Address
	FeedbackIndex uint64
	Score         uint8
	IndexedTag1   common.Hash
	Tag1          string
	Tag2          string
	Endpoint      string
	FeedbackURI   string
	FeedbackHash  [32]byte
	Raw           *types.Log // Blockchain specific contextual infos
}

const ReputationRegistryNewFeedbackEventName = "NewFeedback"

// ContractEventName returns the user-defined event name.
func (ReputationRegistryNewFeedback) ContractEventName() string {
	return ReputationRegistryNewFeedbackEventName
}

// UnpackNewFeedbackEvent is the Go binding that unpacks the event data emitted
// by contract.
//
// Solidity: event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, uint8 score, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)
func (reputationRegistry *ReputationRegistry) UnpackNewFeedbackEvent(log *types.Log) (*ReputationRegistryNewFeedback, error) {
	event := "NewFeedback"
	if len(log.Topics) == 0 {
		return nil, bind.ErrNoEventSignature
	}
	if log.Topics[0] != reputationRegistry.abi.Events[event].ID {
		return nil, bind.ErrEventSignatureMismatch
	}
	out := new(ReputationRegistryNewFeedback)
	if len(log.Data) > 0 {
		if err := reputationRegistry.abi.UnpackIntoInterface(out, event, log.Data); err != nil {
			return nil, err
		}
	}
	var indexed abi.Arguments
	for _, arg := range reputationRegistry.abi.Events[event].Inputs {
		if arg.Indexed {
			indexed = append(indexed, arg)
		}
	}
	if err := abi.ParseTopics(out, indexed, log.Topics[1:]); err != nil {
		return nil, err
	}
	out.Raw = log
	return out, nil
}
